//! A small property-testing driver on stable Rust, with no dependency: inputs grown from a
//! seed corpus by random edits (token inserts, deletions, duplications, splices, cuts) and
//! from scratch, each run under `catch_unwind` and a watchdog.
//!
//! The normal test run tries a few thousand inputs per target; `CHALIE_FUZZ_CASES` raises
//! that (scripts/soak.sh runs a million) and `CHALIE_FUZZ_SEED` picks another sequence. A
//! failure prints the seed, the case number and the input, so it can be replayed exactly.

use chalie::SplitMix64;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Inputs per target in the normal test run.
const SHORT: u64 = 3000;
/// One input running longer than this is a hang: the process prints it and aborts. Generous,
/// because a debug build on a loaded two-core machine is slow; a real hang never returns.
const HANG: Duration = Duration::from_secs(30);

/// Tokens any text target may meet: controls, escapes, odd Unicode, structure characters.
pub const HOSTILE: &[&str] = &[
    "\0",
    "\x1b",
    "\x1b[2J",
    "\x1b]2;t\x07",
    "\u{9b}",
    "\r",
    "\r\n",
    "\n",
    "\n\n",
    "\t",
    "\x7f",
    "\u{202e}",
    "\u{200b}",
    "\u{feff}",
    "\u{301}",
    "👍🏽",
    "日本語",
    "\u{10ffff}",
    "\\",
    "\"",
    "'",
    "`",
    "```",
    "#",
    "[",
    "]",
    "{",
    "}",
    "=",
    ",",
    ":",
    "-",
    "*",
    "|",
    "9999999999999999999999",
    "-0",
    "1e309",
    "NaN",
    " ",
];

/// Inputs for one target.
pub struct Fuzz {
    pub name: &'static str,
    pub seeds: Vec<String>,
    /// Target-specific tokens, mixed with [`HOSTILE`].
    pub dict: Vec<&'static str>,
    /// Largest input generated (bytes, roughly).
    pub max_len: usize,
}

/// The generator handed to a target, for choices beyond the input text (widths, commands).
pub struct Rng(SplitMix64);

impl Rng {
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.0.next_u64() % n as u64) as usize }
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    pub fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// The number of inputs per target for this run.
pub fn cases() -> u64 {
    env_u64("CHALIE_FUZZ_CASES").unwrap_or(SHORT)
}

impl Fuzz {
    fn token<'a>(&'a self, rng: &mut Rng) -> &'a str {
        let t: &&str = if !self.dict.is_empty() && rng.chance(0.6) { rng.pick(&self.dict) } else { rng.pick(HOSTILE) };
        t
    }

    /// A char boundary of `s` at or before `i`.
    fn floor(s: &str, mut i: usize) -> usize {
        i = i.min(s.len());
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        i
    }

    /// One input: a seed edited a few times, or (rarely) tokens and random chars from scratch.
    pub fn input(&self, rng: &mut Rng) -> String {
        let mut s = if self.seeds.is_empty() || rng.chance(0.1) {
            String::new()
        } else {
            rng.pick::<String>(&self.seeds).clone()
        };
        let edits = 1 + rng.below(8);
        for _ in 0..edits {
            let at = Self::floor(&s, rng.below(s.len() + 1));
            match rng.below(8) {
                0..=2 => {
                    let t = self.token(rng).to_string();
                    s.insert_str(at, &t);
                }
                3 => {
                    let end = Self::floor(&s, at + rng.below(16));
                    s.replace_range(at..end, "");
                }
                4 => {
                    let end = Self::floor(&s, at + rng.below(64));
                    let piece = s[at..end].repeat(1 + rng.below(4));
                    s.insert_str(end, &piece);
                }
                5 if !self.seeds.is_empty() => {
                    let other: &String = rng.pick::<String>(&self.seeds);
                    let from = Self::floor(other, rng.below(other.len() + 1));
                    let to = Self::floor(other, from + rng.below(80));
                    s.insert_str(at, &other[from..to]);
                }
                6 => s.truncate(at),
                _ => {
                    let c = char::from_u32(rng.below(0x3_0000) as u32).unwrap_or('\u{fffd}');
                    s.insert(at, c);
                }
            }
        }
        if s.len() > self.max_len {
            s.truncate(Self::floor(&s, self.max_len));
        }
        s
    }

    /// Run `target` on [`cases`] inputs; panics are counted (the first few inputs kept), a hang
    /// aborts the process. Prints the one-line summary and fails the test on any panic.
    pub fn run(&self, mut target: impl FnMut(&str, &mut Rng)) {
        let seed = env_u64("CHALIE_FUZZ_SEED").unwrap_or(0x5EED_0023);
        let n = cases();
        let mut rng = Rng(SplitMix64(seed ^ self.name.bytes().fold(0u64, |h, b| h.rotate_left(5) ^ u64::from(b))));
        let current = Arc::new(Mutex::new(String::new()));
        let started = Arc::new(AtomicU64::new(u64::MAX));
        let done = Arc::new(AtomicBool::new(false));
        let epoch = Instant::now();
        let watchdog = {
            let (current, started, done, name) = (current.clone(), started.clone(), done.clone(), self.name);
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    let at = started.load(Ordering::Relaxed);
                    if at != u64::MAX && epoch.elapsed().as_millis() as u64 > at + HANG.as_millis() as u64 {
                        let input = current.lock().map(|s| s.clone()).unwrap_or_default();
                        eprintln!("fuzz {name}: one input ran past {HANG:?} (seed {seed:#x}): {input:?}");
                        std::process::abort();
                    }
                }
            })
        };
        let mut panics = Vec::new();
        let mut slowest = Duration::ZERO;
        for case in 0..n {
            let input = self.input(&mut rng);
            if let Ok(mut c) = current.lock() {
                c.clone_from(&input);
            }
            let t0 = Instant::now();
            started.store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
            let outcome = catch_unwind(AssertUnwindSafe(|| target(&input, &mut rng)));
            started.store(u64::MAX, Ordering::Relaxed);
            slowest = slowest.max(t0.elapsed());
            if outcome.is_err() {
                panics.push((case, input));
            }
        }
        done.store(true, Ordering::Relaxed);
        let _ = watchdog.join();
        println!(
            "fuzz {}: {n} inputs, {} panics, 0 hangs, slowest input {:.1} ms (seed {seed:#x})",
            self.name,
            panics.len(),
            slowest.as_secs_f64() * 1e3
        );
        assert!(
            panics.is_empty(),
            "fuzz {}: {} panics, first: {:?}",
            self.name,
            panics.len(),
            &panics[..panics.len().min(3)]
        );
    }
}
