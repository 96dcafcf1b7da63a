//! The `ifxtop` binary: parses the command line and hands over to the library.

use clap::Parser;
use ifxtop::cli::{Cli, Command};
use std::process::ExitCode;

/// The system allocator, noting a failed allocation so the abort that follows says so on a
/// terminal given back (src/memory.rs).
#[global_allocator]
static ALLOCATOR: ifxtop::memory::Allocator = ifxtop::memory::Allocator;

fn main() -> ExitCode {
    // Before any thread or large allocation: freed output buffers go back to the system.
    ifxtop::memory::tune();
    let cli = Cli::parse();
    match &cli.command {
        Some(Command::Parse(args)) => ifxtop::commands::parse::run_parse(args),
        Some(Command::Resolve(args)) => ifxtop::commands::resolve::run_cli(args),
        Some(Command::Snapshot(args)) => ifxtop::commands::snapshot::run_cli(args),
        Some(Command::Ash(args)) => ifxtop::commands::ash::run_cli(args),
        Some(Command::Serve(args)) => ifxtop::commands::serve::run_cli(args),
        Some(Command::Incidents(args)) => {
            // The terminal's width; 80 when the output is not a terminal (a pipe, a file).
            let width = crossterm::terminal::size()
                .ok()
                .filter(|_| std::io::IsTerminal::is_terminal(&std::io::stdout()))
                .map_or(80, |(w, _)| usize::from(w));
            ifxtop::commands::incidents::run_cli(args, width)
        }
        Some(Command::Mark(args)) => ifxtop::commands::incidents::run_mark(args),
        Some(Command::Attach { socket }) => ifxtop::commands::attach::run_cli(socket.as_deref()),
        Some(Command::Completions { shell }) => ifxtop::commands::manual::run_completions(*shell),
        Some(Command::Man { command }) => ifxtop::commands::manual::run_man(command.as_deref()),
        None => match ifxtop::tui::run::run(&cli.live) {
            Ok(code) => code,
            Err(e) => {
                // The terminal is already restored here (the guard dropped on the way out).
                eprintln!("ifxtop: {e}");
                ExitCode::from(1)
            }
        },
    }
}
