//! `topic_adjustments`: every change the topic stability regulator made to a topic or boundary
//! parameter, with the pressure that drove it and, once re-checked, whether it was kept. The
//! same shape as `routing_adjustments`, whose statements it shares.

use super::routing_adjustments::AdjustmentLog;
use rusqlite::Connection;

pub struct TopicAdjustmentsRepo<'c>(pub &'c Connection);

impl TopicAdjustmentsRepo<'_> {
    /// The table's statements, as the stability machinery records through them.
    pub fn log(&self) -> AdjustmentLog<'_> {
        AdjustmentLog::new(self.0, "topic_adjustments")
    }
}
