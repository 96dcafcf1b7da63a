//! The `ifxtop` binary: parses the command line and hands over to the library.

use clap::Parser;
use ifxtop::cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Some(Command::Parse(args)) => ifxtop::cli::run_parse(args),
        Some(Command::Resolve(args)) => ifxtop::resolve::run_cli(args),
        None => {
            eprintln!("ifxtop: the live inspector is not built yet; try `ifxtop parse --help`");
            ExitCode::from(1)
        }
    }
}
