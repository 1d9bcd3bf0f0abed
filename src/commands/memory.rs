//! `chalie-tui memory KIND` lists one memory layer (optionally searched); `memory forget ID`
//! deletes one memory for good and records the deletion.

use crate::cli::{MemoryAction, MemoryArgs};
use crate::config::Paths;
use crate::store::{self, MemoryId, MemoryRow};
use std::io::IsTerminal;
use std::process::ExitCode;

pub fn run(paths: &Paths, args: MemoryArgs) -> anyhow::Result<ExitCode> {
    let mut conn = store::open(&paths.db_file)?;
    if let Some(MemoryAction::Forget { id, json }) = &args.action
        && id == "style"
    {
        let r = crate::cognition::adaptive::state::reset(&mut conn)?;
        if *json {
            super::say_json(&serde_json::to_string(&r)?);
        } else {
            super::say(&format!(
                "Reset the communication style (profile {}, {} micro-preference rows); it is learned afresh from \
                 the next message.",
                if r.profile { "removed" } else { "was empty" },
                r.micro_preferences
            ));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(MemoryAction::Forget { id, json }) = args.action {
        let id: MemoryId = id.parse()?;
        let f = store::forget(&mut conn, id)?;
        drop(conn);
        // The files follow the database: every session log and the diagnostics log.
        crate::session::scrub::scrub_logs(&paths.sessions_dir(), &f.needles)?;
        crate::logging::scrub(&paths.log_file(), &f.needles)?;
        if json {
            super::say_json(&serde_json::to_string(&f)?);
        } else {
            let rows: usize = f.rows.values().sum();
            super::say(&format!("Forgot {} ({rows} rows in all); recorded as deletion #{}.", f.id, f.deletion_id));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(listing) = args.kind else { anyhow::bail!("name a layer to list, or `memory forget ID`") };
    if listing == crate::cli::MemoryListing::Style {
        let v = crate::cognition::adaptive::state::show(&conn)?;
        if args.json {
            super::say_json(&v.to_string());
        } else {
            super::say(&style_text(&v));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(kind) = listing.layer() else {
        crate::outln!("{}", uncertainties(&conn, args.limit, args.json)?);
        return Ok(ExitCode::SUCCESS);
    };
    let rows = store::list_layer(&conn, kind, args.search.as_deref(), args.limit)?;
    if args.json {
        super::say_json(&serde_json::to_string(&rows)?);
    } else if rows.is_empty() {
        match &args.search {
            Some(q) => super::say(&format!("No {} mention \"{q}\".", kind.title().to_lowercase())),
            None => crate::outln!("Nothing stored in this layer yet."),
        }
    } else {
        // A pipe or file gets whole lines; a terminal gets lines cut to its width.
        let width = if std::io::stdout().is_terminal() {
            crossterm::terminal::size().map_or(120, |(w, _)| usize::from(w))
        } else {
            usize::MAX
        };
        super::say(&memory_table(&rows, *chrono::Local::now().offset(), width));
    }
    Ok(ExitCode::SUCCESS)
}

/// `memory uncertainties`: every record, unresolved first. The memories' text is read now
/// (records name them and never copy them); a forgotten one reads as null.
pub fn uncertainties(conn: &rusqlite::Connection, limit: usize, json: bool) -> anyhow::Result<String> {
    let records = store::UncertaintiesRepo(conn).all(limit)?;
    let text = |m: Option<&str>| -> anyhow::Result<Option<String>> {
        Ok(match m {
            Some(m) => store::memory_text(conn, m)?.map(|x| x.0),
            None => None,
        })
    };
    if json {
        let mut out = Vec::with_capacity(records.len());
        for r in &records {
            let i = &r.item;
            out.push(serde_json::json!({
                "id": i.id, "kind": i.kind, "severity": i.severity, "state": i.state,
                "memory_a": i.memory_a, "memory_b": i.memory_b,
                "memory_a_text": text(Some(&i.memory_a))?, "memory_b_text": text(i.memory_b.as_deref())?,
                "memory_a_replaced_by": store::replaced_by(conn, &i.memory_a)?.map(|x| x.0),
                "reasoning": i.reasoning, "surface_context": i.surface_context,
                "surfaced_count": i.surfaced_count, "temporal_signal": r.temporal_signal,
                "resolution_strategy": r.resolution_strategy, "resolution_detail": r.resolution_detail,
                "created_at": i.created_at,
            }));
        }
        return Ok(serde_json::to_string(&out)?);
    }
    if records.is_empty() {
        return Ok("No uncertainties: nothing stored disagrees.".into());
    }
    let mut lines = Vec::new();
    for r in &records {
        let i = &r.item;
        let a = text(Some(&i.memory_a))?.unwrap_or_else(|| "(gone)".into());
        let b = match &i.memory_b {
            Some(_) => format!(" vs {}", text(i.memory_b.as_deref())?.unwrap_or_else(|| "(gone)".into())),
            None => String::new(),
        };
        lines.push(format!("{}  {:<13} {:<8} {:<9} {a}{b}", i.id, i.kind, i.severity, i.state));
    }
    Ok(lines.join("\n"))
}

/// `memory KIND` as an aligned table: typed id, reliability, confidence, date, a per-layer
/// note and the text cut to `width` columns. Times in `offset`.
pub fn memory_table(rows: &[MemoryRow], offset: chrono::FixedOffset, width: usize) -> String {
    let date = |ts: i64| {
        chrono::DateTime::from_timestamp(ts, 0)
            .map(|t| t.with_timezone(&offset).format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default()
    };
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            [
                r.id.to_string(),
                r.reliability.clone().unwrap_or_else(|| "-".into()),
                r.confidence.map_or("-".into(), |c| format!("{c:.2}")),
                date(r.created_at),
                r.note(),
            ]
        })
        .collect();
    let head = ["id", "reliability", "conf", "created", "note"];
    let w: Vec<usize> =
        (0..5).map(|i| cells.iter().map(|c| c[i].chars().count()).chain([head[i].len()]).max().unwrap_or(0)).collect();
    let line = |c: [&str; 5], text: &str| {
        let mut fixed = String::new();
        for (i, cell) in c.iter().enumerate() {
            // Confidence is a number: right-aligned; the rest read left to right.
            let pad = w[i].saturating_sub(cell.chars().count());
            let (l, r) = if i == 2 { (pad, 0) } else { (0, pad) };
            fixed.push_str(&format!("{}{cell}{}  ", " ".repeat(l), " ".repeat(r)));
        }
        let room = width.saturating_sub(fixed.chars().count()).max(20);
        let text = crate::text::clip::clip(text, room);
        format!("{fixed}{text}").trim_end().to_string()
    };
    let mut out = line(head, "text");
    for (c, r) in cells.iter().zip(rows) {
        out.push('\n');
        let text = r.text.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push_str(&line([&c[0], &c[1], &c[2], &c[3], &c[4]], &text));
    }
    out
}

/// `memory style` as text: the nine dimensions, the micro-preferences, the directives.
pub fn style_text(v: &serde_json::Value) -> String {
    let mut out = String::new();
    match v["profile"].as_object() {
        None => out.push_str("No communication style observed yet."),
        Some(p) => {
            out.push_str(&format!("Communication style ({} observations):", p["observations"]));
            if let Some(dims) = p["dimensions"].as_object() {
                for (k, x) in dims {
                    out.push_str(&format!("\n  {k:<20} {x}"));
                }
            }
        }
    }
    let micro = v["micro_preferences"].as_array().cloned().unwrap_or_default();
    out.push_str(if micro.is_empty() { "\nNo micro-preferences." } else { "\nMicro-preferences:" });
    for m in &micro {
        let off = if m["applies"] == true { "" } else { " (faded, no longer applied)" };
        out.push_str(&format!(
            "\n  {} = {}  conf {}{off}",
            m["key"].as_str().unwrap_or(""),
            m["value"].as_str().unwrap_or(""),
            m["confidence"]
        ));
    }
    let directives = v["directives"].as_array().cloned().unwrap_or_default();
    out.push_str(if directives.is_empty() {
        "\nNo directives: replies use the default voice."
    } else {
        "\nDirectives:"
    });
    for d in &directives {
        out.push_str(&format!("\n  [{}] {}", d["origin"].as_str().unwrap_or(""), d["text"].as_str().unwrap_or("")));
    }
    out.push_str("\nReset with `chalie-tui memory forget style`.");
    out
}
