//! The adaptive layer's reads and writes: a turn's micro-preferences stored and the
//! directives planned in one call on the database thread ([`prepare`]), what `memory style`
//! shows ([`show`]) and the reset ([`reset`]). The state beside the profile is one `kv_state`
//! row (`adaptive` / [`STATE_KEY`]).

use super::signals::{self, Growth, START_TOLERANCE};
use super::{Applied, Inputs, MIN_OBSERVATIONS, Side, Slot, micro, plan};
use crate::memory::style::{self, KV_KEY, KV_NAMESPACE};
use crate::store::{KvStateRepo, StoreError, TraitsRepo, TurnRepo};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub const STATE_KEY: &str = "state";
/// Micro-preferences below this confidence (decayed) no longer apply (the trait injection
/// threshold, §4.4).
pub const MICRO_MIN_CONFIDENCE: f64 = 0.3;

fn start_tolerance() -> f64 {
    START_TOLERANCE
}

/// What the adaptive layer remembers between turns besides the profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveState {
    #[serde(default = "start_tolerance")]
    pub tolerance: f64,
    /// Turns the layer planned for.
    #[serde(default)]
    pub exchanges: u32,
    #[serde(default)]
    pub last_fork_exchange: Option<u32>,
    /// The last reply was asked to push back: this message's reaction calibrates the tolerance.
    #[serde(default)]
    pub last_challenged: bool,
    #[serde(default)]
    pub growth: Growth,
}

impl Default for AdaptiveState {
    fn default() -> Self {
        AdaptiveState {
            tolerance: START_TOLERANCE,
            exchanges: 0,
            last_fork_exchange: None,
            last_challenged: false,
            growth: Growth::default(),
        }
    }
}

/// A malformed row reads as a fresh state.
pub fn load_state(c: &Connection) -> Result<AdaptiveState, StoreError> {
    let v = TurnRepo(c).kv_get(KV_NAMESPACE, STATE_KEY)?;
    Ok(v.and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default())
}

pub fn save_state(c: &Connection, s: &AdaptiveState) -> Result<(), StoreError> {
    TurnRepo(c).kv_set(KV_NAMESPACE, STATE_KEY, &serde_json::to_value(s).unwrap_or(Value::Null))
}

/// What a turn tells the layer.
#[derive(Debug, Clone, Copy)]
pub struct TurnInput<'a> {
    pub text: &'a str,
    /// Words of the assistant's last reply in this thread.
    pub last_reply_words: Option<usize>,
    /// Whether the reply answers in full (a fork is offered only there).
    pub answers: bool,
    pub now: i64,
}

/// Store the message's micro-preferences, update the challenge tolerance from its reaction,
/// plan the directives and advance the state (fork cooldown, growth cycle).
pub fn prepare(c: &Connection, t: &TurnInput<'_>) -> Result<Applied, StoreError> {
    let (applied, st) = prepare_unsaved(c, t)?;
    save_state(c, &st)?;
    Ok(applied)
}

/// [`prepare`] with the advanced state returned instead of stored: a turn stores it with its
/// commit ([`save_state`]), so planning its reply makes no write transaction of its own.
pub fn prepare_unsaved(c: &Connection, t: &TurnInput<'_>) -> Result<(Applied, AdaptiveState), StoreError> {
    let traits = TraitsRepo(c);
    for (key, value) in micro::detect(t.text) {
        traits.set_explicit(key, value, micro::CATEGORY, t.now)?;
    }
    let micro: Vec<(String, String)> =
        traits.in_category(micro::CATEGORY, MICRO_MIN_CONFIDENCE)?.into_iter().map(|r| (r.key, r.value)).collect();
    let profile = style::load(c)?;
    let mut st = load_state(c)?;
    if st.last_challenged
        && let Some(r) = signals::reaction(t.text)
    {
        st.tolerance = signals::update_tolerance(st.tolerance, r);
    }
    let known = profile.filter(|p| p.observations >= MIN_OBSERVATIONS);
    let energy = known.and_then(|p| {
        let now = style::observe(t.text)?.get("verbosity")?;
        signals::energy(now, p.style.get("verbosity")?)
    });
    let since = st.last_fork_exchange.map(|f| st.exchanges.saturating_sub(f));
    let fork = known.filter(|_| t.answers).and_then(|p| signals::fork(&p.style, since)).map(|f| f.1);
    let inputs = Inputs {
        profile,
        micro,
        load: signals::cognitive_load(t.text, t.last_reply_words),
        energy,
        tolerance: st.tolerance,
        fork,
    };
    let applied = plan(&inputs);
    st.exchanges = st.exchanges.saturating_add(1);
    if applied.directives.iter().any(|d| d.slot == Slot::Fork) {
        st.last_fork_exchange = Some(st.exchanges);
    }
    st.last_challenged = applied.directives.iter().any(|d| d.slot == Slot::Challenge && d.side == Some(Side::High));
    if let Some(p) = profile {
        let (grown, _reflect) = signals::growth_cycle(&mut st.growth, &p.style, t.now);
        if !grown.is_empty() {
            tracing::info!(?grown, "communication style: growth signals");
        }
    }
    Ok((applied, st))
}

/// `memory style`: the profile, the directives it gives on its own, the micro-preferences
/// and the state.
pub fn show(c: &Connection) -> Result<Value, StoreError> {
    let profile = style::load(c)?;
    let st = load_state(c)?;
    let rows = TraitsRepo(c).in_category(micro::CATEGORY, 0.0)?;
    let micro: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({"key": r.key, "value": r.value, "confidence": (r.confidence * 1000.0).round() / 1000.0,
                "applies": r.confidence >= MICRO_MIN_CONFIDENCE})
        })
        .collect();
    let applied = plan(&Inputs {
        profile,
        micro: rows
            .iter()
            .filter(|r| r.confidence >= MICRO_MIN_CONFIDENCE)
            .map(|r| (r.key.clone(), r.value.clone()))
            .collect(),
        tolerance: st.tolerance,
        ..Inputs::default()
    });
    Ok(json!({
        "profile": profile.map(|p| json!({"observations": p.observations, "dimensions": p.style.to_json()})),
        "micro_preferences": micro,
        "directives": applied.directives,
        "challenge_tolerance": st.tolerance,
        "exchanges": st.exchanges,
        "growth_signals": st.growth.signals,
    }))
}

/// What [`reset`] removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Reset {
    pub profile: bool,
    pub state: bool,
    pub micro_preferences: usize,
}

/// Forget the learned style: the profile, the state and every micro-preference.
pub fn reset(c: &mut Connection) -> Result<Reset, StoreError> {
    let tx = c.transaction()?;
    let kv = KvStateRepo(&tx);
    let out = Reset {
        profile: kv.delete(KV_NAMESPACE, KV_KEY)?,
        state: kv.delete(KV_NAMESPACE, STATE_KEY)?,
        micro_preferences: TraitsRepo(&tx).delete_category(micro::CATEGORY)?,
    };
    tx.commit()?;
    Ok(out)
}
