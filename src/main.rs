//! The `ifxtop` binary: parses the command line and hands over to the library.

use clap::Parser;
use ifxtop::cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Some(Command::Parse(args)) => ifxtop::cli::run_parse(args),
        Some(Command::Resolve(args)) => ifxtop::resolve::run_cli(args),
        Some(Command::Snapshot(args)) => ifxtop::report::run_cli(args),
        None => match ifxtop::live::run(&cli.live) {
            Ok(code) => code,
            Err(e) => {
                // The terminal is already restored here (the guard dropped on the way out).
                eprintln!("ifxtop: {e}");
                ExitCode::from(1)
            }
        },
    }
}
