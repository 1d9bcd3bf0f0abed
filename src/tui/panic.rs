//! The terminal and panics. `ratatui::init` installs a panic hook that puts the terminal back
//! (raw mode off, the main screen) before the report is printed, which is right when the app
//! is going down. But the hook runs for every panic, also the ones the app catches and carries
//! on after: a database call (`store::db`), a vector search (`vector_codes::aside`), a spawned
//! task. Restoring the terminal under a running app left it drawing over the shell, in cooked
//! mode, with the report printed across the screen. So the restoring hook runs only for a panic
//! on the thread that took the terminal over (the interface's loop: a panic there ends the
//! app); a panic elsewhere goes to the log file.

use std::panic::PanicHookInfo;
use std::thread::ThreadId;

/// Take the terminal over ([`ratatui::init`]) with the panic hook described above.
pub(crate) fn init_terminal() -> ratatui::DefaultTerminal {
    let terminal = ratatui::init();
    let restore_and_report = std::panic::take_hook();
    std::panic::set_hook(only_on(std::thread::current().id(), restore_and_report));
    terminal
}

/// A panic hook that runs `on_ui` for a panic on thread `ui` and logs any other.
fn only_on(
    ui: ThreadId,
    on_ui: Box<dyn Fn(&PanicHookInfo<'_>) + Send + Sync + 'static>,
) -> Box<dyn Fn(&PanicHookInfo<'_>) + Send + Sync + 'static> {
    Box::new(move |info| {
        if std::thread::current().id() == ui {
            on_ui(info);
        } else {
            let thread = std::thread::current().name().unwrap_or("unnamed").to_string();
            tracing::error!(%thread, "a background thread panicked; the app carries on: {info}");
        }
    })
}

#[cfg(test)]
mod tests {
    use super::only_on;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn only_a_panic_on_the_interfaces_thread_runs_the_restoring_hook() {
        let restored = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&restored);
        let before = std::panic::take_hook();
        std::panic::set_hook(only_on(
            std::thread::current().id(),
            Box::new(move |_| {
                seen.fetch_add(1, Ordering::SeqCst);
            }),
        ));
        // A caught panic on another thread (as the database thread catches its calls').
        let other = std::thread::spawn(|| std::panic::catch_unwind(|| panic!("a database call failed")).is_err());
        let caught_elsewhere = other.join().unwrap_or(false);
        let after_other = restored.load(Ordering::SeqCst);
        // A panic on this thread: the app would be going down.
        let here = std::panic::catch_unwind(|| panic!("the interface failed")).is_err();
        let after_here = restored.load(Ordering::SeqCst);
        std::panic::set_hook(before);
        assert!(caught_elsewhere && here);
        assert_eq!(after_other, 0, "a panic on another thread must leave the terminal to the app");
        assert_eq!(after_here, 1, "a panic on the interface's thread restores the terminal");
    }
}
