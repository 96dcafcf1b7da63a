//! `ifxtop completions SHELL` and `ifxtop man [COMMAND]`: the shell completion scripts and the
//! manual pages, generated from the clap definitions so they never drift from `--help`.

use crate::cli::Cli;
use crate::error::Error;
use clap::CommandFactory;
use std::io::Write;
use std::process::ExitCode;

/// The completion script of `shell`.
pub fn completion_script(shell: clap_complete::Shell) -> String {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "ifxtop", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The manual page (roff) of ifxtop, or of one of its commands (`ifxtop-snapshot(1)`).
pub fn man_page(command: Option<&str>) -> Result<String, Error> {
    let mut cmd = Cli::command();
    cmd.build();
    let page = match command {
        None => cmd,
        Some(name) => {
            let Some(sub) = cmd.find_subcommand(name) else {
                let names: Vec<String> = cmd
                    .get_subcommands()
                    .map(|c| c.get_name().to_string())
                    .collect();
                return Err(Error::Usage(format!(
                    "no command '{name}'; one of: {}",
                    names.join(", ")
                )));
            };
            let title = format!("ifxtop-{}", sub.get_name());
            sub.clone().name(title).version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page).render(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// `ifxtop completions SHELL`.
pub fn run_completions(shell: clap_complete::Shell) -> ExitCode {
    print(&completion_script(shell))
}

/// `ifxtop man [COMMAND]`.
pub fn run_man(command: Option<&str>) -> ExitCode {
    match man_page(command) {
        Ok(page) => print(&page),
        Err(e) => {
            eprintln!("ifxtop man: {e}");
            ExitCode::from(2)
        }
    }
}

fn print(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_completion_knows_the_commands_and_options() {
        let s = completion_script(clap_complete::Shell::Bash);
        for word in ["snapshot", "--demo", "--ssh", "completions", "resolve"] {
            assert!(s.contains(word), "{word} missing");
        }
    }

    #[test]
    fn every_shell_gets_a_script() {
        use clap::ValueEnum;
        for shell in clap_complete::Shell::value_variants() {
            assert!(completion_script(*shell).contains("snapshot"), "{shell}");
        }
    }

    #[test]
    fn the_man_page_is_roff_with_a_title() {
        let page = man_page(None).unwrap();
        assert!(
            page.contains(".TH ifxtop 1"),
            "{}",
            &page[..200.min(page.len())]
        );
        assert!(page.contains("snapshot"));
        let sub = man_page(Some("snapshot")).unwrap();
        assert!(
            sub.contains(".TH ifxtop-snapshot"),
            "{}",
            &sub[..200.min(sub.len())]
        );
        assert!(sub.contains("\\-\\-ssh"));
        assert!(man_page(Some("nope")).is_err());
    }
}
