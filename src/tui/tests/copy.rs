//! Copy out: `y` in the chat view sends the reply at the bottom of the view as an OSC 52
//! sequence, `Y` only its code; scrolled up, the older reply is the one copied.

use super::*;

fn focus_chat(a: &mut App) {
    a.on_terminal(key(KeyCode::Tab));
    assert_eq!(a.focus, Focus::Chat);
}

#[test]
fn y_copies_the_reply_at_the_bottom_and_shift_y_its_code() {
    let mut a = app();
    user(&mut a, 1, "x1", "How do I make tea?");
    done(&mut a, 2, "x1", Mode::Respond, REPLY);
    draw(&mut a, 120, 40);
    focus_chat(&mut a);
    let want = super::clipboard::osc52(REPLY, std::env::var_os("TMUX").is_some()).unwrap();
    assert_eq!(a.on_terminal(key(KeyCode::Char('y'))), Some(Action::Copy(want)));
    assert!(a.status.notice.as_ref().is_some_and(|n| n.text.contains("copied the reply")));
    let code = "def steep(minutes):\n    return minutes * 60  # seconds";
    let want = super::clipboard::osc52(code, std::env::var_os("TMUX").is_some()).unwrap();
    assert_eq!(a.on_terminal(key(KeyCode::Char('Y'))), Some(Action::Copy(want)));
}

#[test]
fn scrolled_up_the_older_reply_is_copied_and_none_is_a_notice() {
    let mut a = app();
    focus_chat(&mut a);
    assert_eq!(a.on_terminal(key(KeyCode::Char('y'))), None, "nothing to copy yet");
    assert!(a.status.notice.as_ref().is_some_and(|n| n.text.contains("no reply")));
    user(&mut a, 1, "x1", "first?");
    done(&mut a, 2, "x1", Mode::Respond, "The first answer.");
    // A long message between them: at the top, the first reply is the newest one in view.
    user(&mut a, 3, "x2", &"a long pasted line\n".repeat(60));
    done(&mut a, 4, "x2", Mode::Respond, "The second answer.");
    draw(&mut a, 100, 30);
    a.on_terminal(key(KeyCode::Home));
    let tmux = std::env::var_os("TMUX").is_some();
    let want = super::clipboard::osc52("The first answer.", tmux).unwrap();
    assert_eq!(a.on_terminal(key(KeyCode::Char('y'))), Some(Action::Copy(want)));
    assert_eq!(a.on_terminal(key(KeyCode::Char('Y'))), None, "no code block there");
}
