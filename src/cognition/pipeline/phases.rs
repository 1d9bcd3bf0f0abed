//! The pure decisions between the pipeline's I/O steps, and the database work of Phase A
//! and the topic stage (each one closure on the database thread, so one message's reads
//! and writes are never interleaved with another's).

use super::detector_state;
use super::fallback::Fallback;
use super::report::TopicReport;
use crate::cognition::boundary::{BoundaryParams, BoundaryState, FocusLevel};
use crate::cognition::context::{MemoryKind, Reliability, order_for_assembly};
use crate::cognition::router::{Mode, RouterState};
use crate::cognition::topic::{self, ClassifierParams, Detector, Topic};
use crate::store::{ChatRepo, FocusSessionsRepo, StoreError, TopicContext, TraitRow, TurnRepo, WmEntry};
use rusqlite::Connection;

/// A silence longer than this ends a session (docs/cognition.md §4.5). Its exchanges are episodes
/// already (the encode worker writes one per exchange) and the semantic worker's idle
/// fallback consolidates them, so the gap is reported, not queued.
pub const SILENCE_GAP_S: i64 = 2_700;
/// Consecutive same-topic exchanges after which focus is inferred (docs/cognition.md §4.5).
pub const INFERRED_FOCUS_STREAK: usize = 5;

/// `(exchanges in the current session before this one, the silence before this message)`.
/// `times` are the thread's earlier user messages, newest first. A session is a run of
/// messages with no gap longer than [`SILENCE_GAP_S`].
pub fn session_exchanges(now: i64, times: &[i64]) -> (usize, Option<i64>) {
    let gap = times.first().map(|t| now - t);
    let mut count = 0;
    let mut later = now;
    for &t in times {
        if later - t > SILENCE_GAP_S {
            break;
        }
        count += 1;
        later = t;
    }
    (count, gap)
}

/// Hold a weak model's reply to its mode's contract: an acknowledgement is at most two
/// sentences; a clarification ends at its first question, and a "clarification" with no
/// question is replaced by a deterministic one. Returns the fallback name when one fired.
pub fn shape_reply(mode: Mode, reply: &str, vague_reference: bool) -> (String, Option<Fallback>) {
    let reply = reply.trim();
    match mode {
        Mode::Acknowledge => (first_sentences(reply, 2), None),
        Mode::Clarify => match reply.find('?') {
            Some(end) => {
                let start = reply[..end].rfind(['.', '!', '\n']).map_or(0, |i| i + 1);
                let question = reply[start..=end].trim();
                let lead = reply[..start].trim();
                // Keep one short lead-in sentence ("Happy to help."), never a paragraph.
                let text =
                    if !lead.is_empty() && lead.len() <= 80 { format!("{lead} {question}") } else { question.into() };
                (text, None)
            }
            None => {
                let q = if vague_reference {
                    "What are you referring to? Tell me a little more and I'll take it from there."
                } else {
                    "Could you tell me a bit more about what you need?"
                };
                (q.to_string(), Some(Fallback::ClarifyNoQuestion))
            }
        },
        _ => (reply.to_string(), None),
    }
}

/// The first `n` sentences of `text` (a sentence ends at `.`, `!` or `?` followed by a space
/// or the end).
fn first_sentences(text: &str, n: usize) -> String {
    let mut seen = 0;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?') && bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace()) {
            seen += 1;
            if seen == n {
                return text[..=i].to_string();
            }
        }
    }
    text.to_string()
}

/// Hits below this match are not worth a line of the reply's context.
pub const CONTEXT_RECALL_MIN_MATCH: f64 = 0.4;
/// At most this many recalled memories go into a reply's context.
pub const CONTEXT_RECALL_LIMIT: usize = 3;

/// The earlier episodes and concepts a message brings back, for the reply's context
/// (semantic retrieval in the seed's context assembly).
pub fn recalled_for_context(
    c: &Connection,
    text: &str,
    embedding: Option<&[f32]>,
    now: i64,
) -> Result<Vec<crate::memory::recall::Hit>, StoreError> {
    start_context_recall(c, text, embedding, now)?.finish(c)
}

/// The layers recall adds to a reply's context: traits, facts and gists are there already.
fn context_layers() -> &'static [String] {
    static LAYERS: std::sync::LazyLock<[String; 2]> =
        std::sync::LazyLock::new(|| ["episodes".to_string(), "concepts".to_string()]);
    &*LAYERS
}

/// [`recalled_for_context`] begun: its vector search runs beside the caller's next reads.
pub fn start_context_recall<'a>(
    c: &Connection,
    text: &'a str,
    embedding: Option<&'a [f32]>,
    now: i64,
) -> Result<ContextRecall<'a>, StoreError> {
    let req = crate::memory::recall::RecallRequest {
        query: text,
        embedding,
        layers: context_layers(),
        limit: CONTEXT_RECALL_LIMIT,
        now,
    };
    Ok(ContextRecall(crate::memory::recall::start(c, &req)?))
}

/// See [`start_context_recall`].
pub struct ContextRecall<'a>(crate::memory::recall::StartedRecall<'a>);

impl ContextRecall<'_> {
    /// The recalled memories, sure ones first (see [`recalled_for_context`]).
    pub fn finish(self, c: &Connection) -> Result<Vec<crate::memory::recall::Hit>, StoreError> {
        let hits = self.0.finish(c)?;
        let mut hits: Vec<_> = hits.into_iter().filter(|h| h.confidence >= CONTEXT_RECALL_MIN_MATCH).collect();
        // docs/cognition.md §4.3 / §10.1: a doubtful memory still comes, after the sure ones.
        order_for_assembly(&mut hits, |h| {
            let kind = if h.layer == "concept" { MemoryKind::Concept } else { MemoryKind::Episode };
            (kind, h.confidence, Reliability::parse(&h.reliability))
        });
        Ok(hits)
    }
}

/// The topic stage under the stability regulator's newest parameters (docs/cognition.md
/// §5.6), then the episodes and concepts the message brings back; recall is skipped for a
/// message with nothing to search for. `defaults` are the engine's configured parameters.
pub fn topic_and_recall(
    c: &Connection,
    thread_id: &str,
    text: &str,
    embedding: Option<&[f32]>,
    now: i64,
    defaults: (&ClassifierParams, &BoundaryParams),
) -> Result<(TopicStage, Vec<crate::memory::recall::Hit>), StoreError> {
    let (decided, memories) = decide_and_recall(c, thread_id, text, embedding, now, defaults)?;
    let stage =
        if decided.writes() { crate::store::in_savepoint(c, || decided.persist(c))? } else { decided.persist(c)? };
    Ok((stage, memories))
}

/// [`topic_and_recall`] with the topic stage decided but not yet written, so the caller can
/// write it in one commit with its own writes (the concept graph's activation).
pub fn decide_and_recall(
    c: &Connection,
    thread_id: &str,
    text: &str,
    embedding: Option<&[f32]>,
    now: i64,
    defaults: (&ClassifierParams, &BoundaryParams),
) -> Result<(TopicDecided, Vec<crate::memory::recall::Hit>), StoreError> {
    let (_, tp, bp) = crate::cognition::stability::topics_cycle::current(c, defaults)?;
    // The recall's vector search starts before the topic decision, so it runs beside the
    // decision's reads; not for a message with nothing to search for, which the decision
    // reports contentless (`topic::classify` asks the same question of the same text).
    let recall = match embedding {
        Some(_) if !crate::cognition::topic::is_contentless(text, &tp) => {
            Some(start_context_recall(c, text, embedding, now)?)
        }
        _ => None,
    };
    let decided = decide_topic(c, thread_id, text, embedding, now, (&tp, &bp))?;
    let memories = match recall {
        _ if decided.report.contentless || embedding.is_none() => Vec::new(),
        Some(recall) => recall.finish(c)?,
        // A contentless greeting opening a thread is reported as a new topic, not contentless.
        None => recalled_for_context(c, text, embedding, now)?,
    };
    Ok((decided, memories))
}

/// What Phase A read.
#[derive(Debug, Clone, Default)]
pub struct PhaseA {
    /// All of the thread's live working memory, oldest first: what the reply prompt shows.
    pub conversation: Vec<WmEntry>,
    pub traits: Vec<TraitRow>,
    pub session_exchanges: usize,
    /// The silence before this message, when it ended a session.
    pub silence_gap_s: Option<i64>,
    /// The self-model's noteworthy items, most severe first (docs/cognition.md §4.8).
    pub self_items: Vec<crate::cognition::self_model::SelfItem>,
    /// The onboarding state before this exchange (docs/cognition.md §4.9).
    pub spark: crate::cognition::onboarding::SparkState,
    /// Whether the critic left this thread a question that this message may answer: read here,
    /// on a trip the turn makes anyway, so a turn with none makes no trip for it.
    pub critic_pending: bool,
}

impl PhaseA {
    /// The newest `WORKING_MEMORY_ENTRIES` of the conversation: what the router and triage read.
    pub fn working_memory(&self) -> &[WmEntry] {
        let newest = self.conversation.len().saturating_sub(crate::store::WORKING_MEMORY_ENTRIES);
        &self.conversation[newest..]
    }

    /// Words in the last reply of the working memory: the adaptive layer's length signal.
    pub fn last_reply_words(&self) -> Option<usize> {
        self.working_memory().iter().rev().find(|e| e.role == "assistant").map(|e| e.content.split_whitespace().count())
    }
}

/// Phase A steps 1–2 and 9: the identity hook's write, working memory, traits, session
/// tracking and the silence that ends a session.
pub fn phase_a(
    c: &Connection,
    thread_id: &str,
    exchange_id: &str,
    name: Option<&str>,
    regulator_break: Option<&str>,
    now: i64,
) -> Result<PhaseA, StoreError> {
    Ok(phase_a_read(c, thread_id, exchange_id, name, now)?.assess(regulator_break))
}

/// What Phase A read, before the regulator's break on this turn is known: the turn reads it
/// on the same trip to the database thread as the regulator's state, which decides the break.
#[derive(Debug, Clone)]
pub struct PhaseARead {
    a: PhaseA,
    readings: crate::store::SelfReadings,
}

impl PhaseARead {
    /// Phase A with the self-model's items: the regulator's break on this turn (docs/cognition.md
    /// §13.1) is one of them.
    pub fn assess(self, regulator_break: Option<&str>) -> PhaseA {
        let self_items = crate::cognition::self_model::assess(
            &self.readings,
            regulator_break,
            crate::cognition::act::plan::ActLimits::default().fatigue_budget,
        );
        PhaseA { self_items, ..self.a }
    }
}

/// [`phase_a`]'s database work: the identity hook's write, then the reads.
pub fn phase_a_read(
    c: &Connection,
    thread_id: &str,
    exchange_id: &str,
    name: Option<&str>,
    now: i64,
) -> Result<PhaseARead, StoreError> {
    let repo = TurnRepo(c);
    if let Some(name) = name {
        repo.set_explicit_trait("name", name, "core")?;
    }
    crate::store::in_read(c, || {
        let times = repo.session_times_before(thread_id, exchange_id, now, SILENCE_GAP_S)?;
        let (session_exchanges, gap) = session_exchanges(now, &times);
        let silence_gap_s = gap.filter(|g| *g > SILENCE_GAP_S);
        let mut traits = repo.traits()?;
        // Within a reliability state the store's order (statements first, then confidence) holds.
        order_for_assembly(&mut traits, |t| (MemoryKind::Fact, 1.0, Reliability::parse(&t.reliability)));
        let readings = crate::store::self_readings(c, now)?;
        let conversation = repo.conversation(thread_id, now)?;
        let spark = spark_state(c)?;
        let critic_pending = crate::store::KvStateRepo(c)
            .get_text(crate::cognition::act::critic_answer::NAMESPACE, thread_id)?
            .is_some();
        let a = PhaseA {
            conversation,
            traits,
            session_exchanges,
            silence_gap_s,
            self_items: Vec::new(),
            spark,
            critic_pending,
        };
        Ok(PhaseARead { a, readings })
    })
}

/// The stored onboarding state (fresh when there is none).
pub fn spark_state(c: &Connection) -> Result<crate::cognition::onboarding::SparkState, StoreError> {
    use crate::cognition::onboarding::{KEY, NAMESPACE, SparkState};
    Ok(SparkState::from_json(TurnRepo(c).kv_get(NAMESPACE, KEY)?))
}

/// What the topic stage decided and read.
#[derive(Debug, Clone)]
pub struct TopicStage {
    pub report: TopicReport,
    pub context: TopicContext,
    pub router_state: RouterState,
    pub focus: FocusLevel,
    /// What an open focus session is about.
    pub focus_on: Option<String>,
}

/// The topic stage: classify the message among the thread's topics with the thread's
/// boundary detector, persist both, then read the chosen topic's context. With no
/// embedding (the model failed) the thread's current topic is kept and nothing moves.
pub fn topic_stage(
    c: &Connection,
    thread_id: &str,
    text: &str,
    embedding: Option<&[f32]>,
    now: i64,
    params: (&ClassifierParams, &BoundaryParams),
) -> Result<TopicStage, StoreError> {
    let decided = decide_topic(c, thread_id, text, embedding, now, params)?;
    if decided.writes() { crate::store::in_savepoint(c, || decided.persist(c)) } else { decided.persist(c) }
}

/// The topic stage decided but not yet written ([`decide_topic`]): the turn writes it in the
/// same commit as the concept graph's activation, after recall (which reads none of it).
pub struct TopicDecided {
    thread_id: String,
    report: TopicReport,
    focus: (FocusLevel, Option<String>),
    now: i64,
    /// The chosen topic's row, the detector's state and which of its window's messages are
    /// stored already: `None` when nothing is stored (no embedding, or a greeting that opens
    /// the thread).
    save: Option<(Topic, BoundaryState, detector_state::InStore)>,
}

impl TopicDecided {
    pub fn report(&self) -> &TopicReport {
        &self.report
    }

    /// Whether [`Self::persist`] writes rows of its own (beside the context read's).
    pub fn writes(&self) -> bool {
        self.save.is_some()
    }

    /// Write the topic row and the detector's state, then read the chosen topic's context and
    /// router state. The caller holds the savepoint when [`Self::writes`]: it opens with a
    /// write, so the savepoint holds the write lock from its first statement.
    pub fn persist(self, c: &Connection) -> Result<TopicStage, StoreError> {
        let repo = TurnRepo(c);
        let TopicDecided { thread_id, report, focus, now, save } = self;
        let Some((topic, state, stored)) = save else { return finish(&repo, &thread_id, report, focus, now) };
        repo.save_topic(&thread_id, &topic)?;
        detector_state::save(&repo, &thread_id, state, stored, now)?;
        finish(&repo, &thread_id, report, focus, now)
    }
}

/// The topic stage's reads and decision: classify the message among the thread's topics with
/// the thread's boundary detector; nothing is written ([`TopicDecided::persist`] does).
pub fn decide_topic(
    c: &Connection,
    thread_id: &str,
    text: &str,
    embedding: Option<&[f32]>,
    now: i64,
    params: (&ClassifierParams, &BoundaryParams),
) -> Result<TopicDecided, StoreError> {
    let repo = TurnRepo(c);
    let (cparams, bparams) = params;
    let (mut topics, focus, detector, new_id) = crate::store::in_read(c, || {
        let topics: Vec<Topic> = repo.topics(thread_id)?;
        let focus = focus_level(c, thread_id, topics.first().map(|t| t.name.as_str()), now)?;
        let (detector, new_id) = match embedding {
            Some(_) => (Some(detector_state::load(&repo, thread_id, now, bparams)?), repo.next_topic_id()?),
            None => (None, 0),
        };
        Ok((topics, focus, detector, new_id))
    })?;
    // Rows come most recently updated first: the thread's current topic is the first.
    let active = (!topics.is_empty()).then_some(0);
    let focus_level = focus.0;
    let decided = |report, save| TopicDecided { thread_id: thread_id.to_string(), report, focus, now, save };

    let (Some(e), Some((mut state, stored))) = (embedding, detector) else {
        let (name, is_new) = match topics.first() {
            Some(t) => (t.name.clone(), false),
            None => (topic::topic_name(text, now), true),
        };
        return Ok(decided(TopicReport { degraded: true, ..TopicReport::new(name, is_new) }, None));
    };
    let msg = topic::Message { text, embedding: e, now_unix_s: now };
    let cls = topic::classify(&topics, active, &msg, Some(Detector { state: &mut state, focus: focus_level }), cparams);
    if cls.contentless && cls.topic_index.is_none() {
        // A greeting as the thread's first message must not become the centroid every
        // later message is compared with; it gets a provisional name and no row.
        let report = TopicReport::new(topic::topic_name(text, now), true).with_diagnostics(cls.diagnostics.as_ref());
        return Ok(decided(report, None));
    }
    let i = topic::apply(&mut topics, &cls, &msg, new_id, cparams);
    let t = topics.swap_remove(i);
    let report = TopicReport {
        switch_score: cls.switch_score,
        confidence: cls.confidence,
        contentless: cls.contentless,
        ..TopicReport::new(t.name.clone(), cls.is_new_topic)
    }
    .with_diagnostics(cls.diagnostics.as_ref());
    Ok(decided(report, Some((t, state, stored))))
}

/// The router's per-topic history is per thread too: topic names are not unique across
/// threads ("shorter" in two conversations), and one must not inherit the other's last mode.
pub fn router_state_key(thread_id: &str, topic: &str) -> String {
    format!("{thread_id}/{topic}")
}

/// Read the chosen topic's context and router state.
fn finish(
    repo: &TurnRepo,
    thread_id: &str,
    report: TopicReport,
    (focus, focus_on): (FocusLevel, Option<String>),
    now: i64,
) -> Result<TopicStage, StoreError> {
    let context = repo.topic_context(&report.name, now)?;
    let router_state = repo
        .kv_get("router_state", &router_state_key(thread_id, &report.name))?
        .and_then(|v| serde_json::from_value::<RouterState>(v).ok())
        .unwrap_or_default();
    Ok(TopicStage { report, context, router_state, focus, focus_on })
}

/// Explicit focus (with what it is on) from an open focus session; inferred after
/// [`INFERRED_FOCUS_STREAK`] consecutive user messages on the current topic.
fn focus_level(
    c: &Connection,
    thread_id: &str,
    current: Option<&str>,
    now: i64,
) -> Result<(FocusLevel, Option<String>), StoreError> {
    let open = FocusSessionsRepo(c).active_in_thread(thread_id, now)?;
    if open.is_some() {
        return Ok((FocusLevel::Explicit, open));
    }
    let Some(current) = current else { return Ok((FocusLevel::None, None)) };
    let recent = ChatRepo(c).recent_user_topics(thread_id, INFERRED_FOCUS_STREAK)?;
    let streak = recent.len() == INFERRED_FOCUS_STREAK && recent.iter().all(|t| t == current);
    Ok((if streak { FocusLevel::Inferred } else { FocusLevel::None }, None))
}

/// A message is a distraction when a focus session is open and it opened a new topic
/// (a contentless or social message is never one).
pub fn is_distraction(focus_on: Option<&str>, topic: &TopicReport, social: bool) -> bool {
    focus_on.is_some() && topic.is_new_topic && !topic.contentless && !topic.degraded && !social
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_split_at_silence() {
        let now = 10_000;
        assert_eq!(session_exchanges(now, &[]), (0, None));
        assert_eq!(session_exchanges(now, &[9_990, 9_000, 8_000]), (3, Some(10)));
        assert_eq!(session_exchanges(now, &[9_990, 9_000, 1_000]), (2, Some(10)));
        assert_eq!(session_exchanges(now, &[5_000, 4_900]), (0, Some(5_000)));
        assert_eq!(session_exchanges(now, &[now - SILENCE_GAP_S]), (1, Some(SILENCE_GAP_S)));
    }

    /// Phase A reads a session's message times only back to its start (the first silence), and
    /// counts what the whole history's times would count.
    #[test]
    fn a_sessions_times_stop_at_its_start_and_count_as_the_whole_historys() {
        let c = crate::store::open_in_memory().unwrap();
        let chat = crate::store::ChatRepo(&c);
        let now = 1_800_000_000;
        // Forty messages a day ago, three silences ago, then a session of four (a minute apart),
        // then the message being answered.
        let mut times: Vec<i64> = (0..40).map(|i| now - 86_400 - 60 * (40 - i)).collect();
        times.extend([now - 3 * SILENCE_GAP_S, now - 2 * SILENCE_GAP_S - 1]);
        times.extend((0..4).map(|i| now - 60 * (4 - i)));
        for (i, t) in times.iter().enumerate() {
            chat.append("t", &format!("x{i}"), "user", "a message", None, None).unwrap();
            crate::store::fixtures::Fixture(&c).set(
                "chat_history",
                "created_at = ?1",
                "exchange_id = ?2",
                rusqlite::params![t, format!("x{i}")],
            );
        }
        chat.append("t", "now", "user", "this one", None, None).unwrap();
        let repo = TurnRepo(&c);
        let all = repo.message_times_before("t", "now").unwrap();
        let session = repo.session_times_before("t", "now", now, SILENCE_GAP_S).unwrap();
        assert_eq!(all.len(), times.len());
        assert_eq!(session, all[..5].to_vec(), "the session's four, and the one before the silence");
        assert_eq!(session_exchanges(now, &session), session_exchanges(now, &all));
        assert_eq!(session_exchanges(now, &session), (4, Some(60)));
        // A thread whose newest message is already past a silence: one time read, none counted.
        let later = now + 2 * SILENCE_GAP_S;
        let session = repo.session_times_before("t", "now", later, SILENCE_GAP_S).unwrap();
        assert_eq!(session.len(), 1);
        assert_eq!(session_exchanges(later, &session), session_exchanges(later, &all));
    }

    /// A silence gap used to queue an `episode` job that no worker claims, so the job queue
    /// never emptied. The gap is reported; nothing is queued.
    #[test]
    fn a_silence_gap_leaves_no_job_that_nothing_claims() {
        let c = crate::store::open_in_memory().unwrap();
        crate::store::ChatRepo(&c).append("t", "x1", "user", "hello", None, None).unwrap();
        let later = crate::store::now_ts() + SILENCE_GAP_S + 60;
        let a = phase_a(&c, "t", "x2", None, None, later).unwrap();
        assert!(a.silence_gap_s.is_some(), "the gap is still reported");
        assert_eq!(crate::store::JobsRepo(&c).pending_count().unwrap(), 0, "nothing queued that no worker drains");
    }

    #[test]
    fn distraction_is_a_clear_topic_change_during_focus() {
        let new = TopicReport::new("capital-france", true);
        assert!(is_distraction(Some("taxes"), &new, false));
        assert!(!is_distraction(None, &new, false), "no focus session");
        assert!(!is_distraction(Some("taxes"), &TopicReport::new("taxes", false), false), "same topic");
        assert!(!is_distraction(Some("taxes"), &new, true), "a greeting is not a distraction");
        let contentless = TopicReport { contentless: true, ..new.clone() };
        assert!(!is_distraction(Some("taxes"), &contentless, false));
    }

    #[test]
    fn replies_are_held_to_their_mode() {
        let (ack, f) = shape_reply(Mode::Acknowledge, "Hello! Nice to see you. My name is Elena and I", false);
        assert_eq!((ack.as_str(), f), ("Hello! Nice to see you.", None));
        let (q, f) = shape_reply(Mode::Clarify, "Sure. Which file do you mean? I can also help with", true);
        assert_eq!((q.as_str(), f), ("Sure. Which file do you mean?", None));
        let (q, f) = shape_reply(Mode::Clarify, "I am a helpful assistant.", true);
        assert!(q.ends_with("from there."), "{q}");
        assert_eq!(f.map(|f| f.to_string()).as_deref(), Some("clarify_no_question"));
        let (r, _) = shape_reply(Mode::Respond, "  Paris.  ", false);
        assert_eq!(r, "Paris.");
    }
}
