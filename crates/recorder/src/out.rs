//! Standard output for every subcommand. `println!` panics when the reader has gone away
//! (`tracelab report --json | head`); a closed pipe is the reader saying "enough", so, as in
//! ripgrep, the process ends quietly with status 0. Any other write error is reported once and
//! ends with status 1. Every trace file is written before anything is printed, so no recorded
//! request is lost by ending here.

use std::fmt;
use std::io::{self, Write};

/// Writes `args` to standard output; see the module docs for what happens when it cannot.
pub fn write_fmt(args: fmt::Arguments<'_>) {
    let mut stdout = io::stdout().lock();
    let result = stdout.write_fmt(args).and_then(|()| stdout.flush());
    if let Err(e) = result {
        end_on(e)
    }
}

/// Writes bytes to standard output, as [`write_fmt`].
pub fn write_all(bytes: &[u8]) {
    let mut stdout = io::stdout().lock();
    if let Err(e) = stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        end_on(e)
    }
}

/// Ends the process on a failed write to standard output (quietly, status 0, on a closed pipe).
pub fn end_on(e: io::Error) -> ! {
    if e.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(0)
    }
    eprintln!("tracelab: cannot write to standard output: {e}");
    std::process::exit(1)
}

/// `print!` that ends quietly on a closed pipe.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write_fmt(format_args!($($arg)*)) };
}

/// `println!` that ends quietly on a closed pipe.
#[macro_export]
macro_rules! outln {
    () => { $crate::out::write_fmt(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write_fmt(format_args!("{}\n", format_args!($($arg)*))) };
}
