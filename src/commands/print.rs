//! Printing at the command edge that cannot panic. `println!` panics when stdout is a closed
//! pipe (`chalie-tui ask hi | head -c1`, `--version | true`) and `eprintln!` when stderr is;
//! a reader that went away is not an error of the command, so the line is dropped and the
//! command finishes its work (every turn still committed) with its usual exit code.

use std::io::Write;

/// Write formatted text to stdout, dropping it when stdout cannot take it.
pub fn out(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_fmt(args).and_then(|()| stdout.flush());
}

/// Write bytes already rendered (a completion script, a man page) to stdout, dropping them
/// when stdout cannot take them, as [`out`] does.
pub fn out_bytes(bytes: &[u8]) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(bytes).and_then(|()| stdout.flush());
}

/// Write formatted text to stderr, dropping it when stderr cannot take it.
pub fn err(args: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// `println!` for commands: never panics on a closed stdout ([`out`]).
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => { $crate::commands::print::out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` for commands: never panics on a closed stdout ([`out`]).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::commands::print::out(format_args!($($arg)*)) };
}

/// `eprintln!` for commands: never panics on a closed stderr ([`err`]).
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => { $crate::commands::print::err(format_args!("{}\n", format_args!($($arg)*))) };
}
