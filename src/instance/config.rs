//! The configuration file (TOML, kebab-case keys, unknown keys rejected): defaults for the
//! command-line options, the instances to watch, and the key bindings (kept as written: the
//! screen reads them, `tui::keymap::from_config`).

use crate::error::Error;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct Config {
    /// Refresh interval in seconds for the 1 s sources.
    pub(crate) interval: Option<f64>,
    /// Base page size in KB of onstat page numbers (2 on Linux, 4 on AIX and Windows).
    pub(crate) base_page_kb: Option<u32>,
    /// Informix listener ports.
    pub(crate) ports: Option<Vec<u16>>,
    /// Buffer hot spot window in seconds.
    pub(crate) hotspot_window: Option<u64>,
    /// Send-Q history window in seconds.
    pub(crate) socket_window: Option<u64>,
    /// The output cap in MB (`--max-output-mb`).
    pub(crate) max_output_mb: Option<u64>,
    /// Action name → keys, replacing that action's default keys: `quit = ["q", "ctrl-c"]`.
    #[serde(default)]
    pub(crate) keys: BTreeMap<String, Vec<String>>,
    /// `[[instance]]` tables: the instances to watch when the command line names none.
    #[serde(default)]
    pub(crate) instance: Vec<InstanceConfig>,
}

/// One `[[instance]]` table: `server = "ol_prod"`, and optionally `ssh = "informix@db01"` and
/// `ports = [9088]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct InstanceConfig {
    pub(crate) server: String,
    pub(crate) ssh: Option<String>,
    pub(crate) ports: Option<Vec<u16>>,
}

/// `<config dir>/ifxtop/config.toml` (`~/.config/ifxtop/config.toml` on Linux).
pub(crate) fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "ifxtop").map(|d| d.config_dir().join("config.toml"))
}

impl Config {
    pub(crate) fn parse(text: &str) -> Result<Config, Error> {
        toml::from_str(text).map_err(|e| Error::Usage(format!("config: {e}")))
    }

    /// Loads `path`, or the default path when it exists.
    /// (A config others may write is warned of, as ssh does of its own: whoever writes it
    /// chooses the hosts and servers ifxtop runs onstat on.) A missing default file is no error; a
    /// missing explicit file is.
    pub(crate) fn load(path: Option<&Path>) -> Result<Config, Error> {
        let (path, explicit) = match path {
            Some(p) => (p.to_path_buf(), true),
            None => match default_path() {
                Some(p) => (p, false),
                None => return Ok(Config::default()),
            },
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                if let Some(w) = loose_permissions(&path) {
                    eprintln!("ifxtop: warning: {w}");
                }
                Config::parse(&text).map_err(|e| Error::Usage(format!("{}: {e}", path.display())))
            }
            Err(e) if !explicit && e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Config::default())
            }
            Err(source) => Err(Error::File {
                path: path.display().to_string(),
                source,
            }),
        }
    }
}

/// Why a config file others can write (or one in a directory others can write) is a risk, or
/// `None` when it is not.
fn loose_permissions(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    (mode & 0o022 != 0).then(|| {
        format!(
            "{} is writable by others (mode {:o}): whoever writes it chooses the hosts and \
             servers ifxtop runs commands on (chmod go-w)",
            path.display(),
            mode & 0o777
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kebab_case_keys_and_key_bindings() {
        let c = Config::parse(
            "interval = 2.0\nbase-page-kb = 4\nports = [9088, 9089]\n[keys]\nquit = [\"x\"]\n",
        )
        .expect("valid config");
        assert_eq!(c.interval, Some(2.0));
        assert_eq!(c.base_page_kb, Some(4));
        assert_eq!(c.ports, Some(vec![9088, 9089]));
        assert_eq!(c.keys.get("quit"), Some(&vec!["x".to_string()]));
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let e = Config::parse("intervall = 2").expect_err("typo must fail");
        assert!(e.to_string().contains("intervall"), "{e}");
        // An unknown action in [keys]: tui::keymap's tests (the screen reads the bindings).
    }
}
