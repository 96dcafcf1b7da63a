//! `ifxtop resolve`: the successor of the seed's `chunkpg` script.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// A captured `oncheck -pe` output.
    #[arg(long, value_name = "FILE")]
    pub extents: PathBuf,
}

pub fn run_cli(args: &ResolveArgs) -> ExitCode {
    eprintln!(
        "ifxtop resolve: not written yet ({})",
        args.extents.display()
    );
    ExitCode::from(1)
}
