//! The scroll keys, mapped once. Every scrolling view (the side panes, the chat, the help
//! popup, the audit table and its detail, the memory detail) answers Up/Down/PageUp/PageDown/
//! Top/Bottom the same way; each view only says how it moves, how long its page is and where
//! its ends are, so a key can never mean one thing in one pane and another elsewhere.

use super::audit::Audit;
use super::chat::Chat;
use super::keymap::Command;
use super::panes::Scroll;

/// A view that moves through rows; positive `rows` move toward the end of the content.
pub trait Scrollable {
    fn move_by(&mut self, rows: isize);
    /// How many rows PageUp/PageDown move.
    fn page(&self) -> isize;
    fn to_start(&mut self);
    fn to_end(&mut self);
}

/// Apply a scroll command to `view`; any command that is not a step, a page or Top goes to
/// the end, as End does.
pub fn apply(view: &mut impl Scrollable, cmd: Command) {
    match cmd {
        Command::Up => view.move_by(-1),
        Command::Down => view.move_by(1),
        Command::PageUp => view.move_by(-view.page()),
        Command::PageDown => view.move_by(view.page()),
        Command::Top => view.to_start(),
        _ => view.to_end(),
    }
}

impl Scrollable for Scroll {
    fn move_by(&mut self, rows: isize) {
        self.by(i32::try_from(rows).unwrap_or(if rows < 0 { i32::MIN } else { i32::MAX }));
    }

    /// All but one visible row, so the last line of the old page stays in sight.
    fn page(&self) -> isize {
        self.visible.saturating_sub(1).max(1) as isize
    }

    fn to_start(&mut self) {
        self.to_top();
    }

    fn to_end(&mut self) {
        self.to_bottom();
    }
}

/// The chat counts its scroll from the bottom (0 follows the newest text), so moving toward
/// the end lowers it.
impl Scrollable for Chat {
    fn move_by(&mut self, rows: isize) {
        self.scroll_by(-rows);
    }

    fn page(&self) -> isize {
        Chat::page(self)
    }

    fn to_start(&mut self) {
        self.to_top();
    }

    fn to_end(&mut self) {
        self.to_bottom();
    }
}

/// The audit table moves its selection; with a decision open, its detail scrolls instead.
impl Scrollable for Audit {
    fn move_by(&mut self, rows: isize) {
        if rows < 0 { self.up(rows.unsigned_abs()) } else { self.down(rows.unsigned_abs()) }
    }

    fn page(&self) -> isize {
        isize::try_from(Audit::page(self)).unwrap_or(isize::MAX)
    }

    fn to_start(&mut self) {
        self.home();
    }

    fn to_end(&mut self) {
        self.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view that records what it was asked to do.
    #[derive(Default)]
    struct Probe(Vec<String>);

    impl Scrollable for Probe {
        fn move_by(&mut self, rows: isize) {
            self.0.push(format!("move {rows}"));
        }
        fn page(&self) -> isize {
            7
        }
        fn to_start(&mut self) {
            self.0.push("start".into());
        }
        fn to_end(&mut self) {
            self.0.push("end".into());
        }
    }

    #[test]
    fn each_key_means_one_movement() {
        let mut p = Probe::default();
        let keys = [Command::Up, Command::Down, Command::PageUp, Command::PageDown, Command::Top, Command::Bottom];
        for cmd in keys {
            apply(&mut p, cmd);
        }
        assert_eq!(p.0, ["move -1", "move 1", "move -7", "move 7", "start", "end"]);
    }

    #[test]
    fn a_pane_pages_by_all_but_one_visible_row_and_stops_at_its_ends() {
        let mut s = Scroll { top: 0, rows: 100, visible: 11 };
        apply(&mut s, Command::Up);
        assert_eq!(s.top, 0, "already at the top");
        apply(&mut s, Command::Down);
        apply(&mut s, Command::PageDown);
        assert_eq!(s.top, 11);
        apply(&mut s, Command::PageUp);
        assert_eq!(s.top, 1);
        apply(&mut s, Command::Bottom);
        assert_eq!(s.top, 89);
        apply(&mut s, Command::PageDown);
        assert_eq!(s.top, 89, "the last page stays full");
        apply(&mut s, Command::Top);
        assert_eq!(s.top, 0);
        let mut tiny = Scroll { top: 0, rows: 5, visible: 1 };
        apply(&mut tiny, Command::PageDown);
        assert_eq!(tiny.top, 1, "a one-row pane still pages by one row");
    }

    #[test]
    fn the_chat_counts_from_the_bottom() {
        let mut chat = Chat::default();
        apply(&mut chat, Command::Up);
        assert_eq!(chat.scroll, 0, "nothing to scroll into");
        apply(&mut chat, Command::Bottom);
        assert_eq!(chat.scroll, 0);
    }
}
