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
    /// The flight recorder's directory (`--ring`), and its limits (`--ring-hours`,
    /// `--ring-max-mb`, `--ring-before`, `--ring-incidents-mb`).
    pub(crate) ring: Option<PathBuf>,
    pub(crate) ring_hours: Option<f64>,
    pub(crate) ring_max_mb: Option<u64>,
    pub(crate) ring_before: Option<f64>,
    pub(crate) ring_incidents_mb: Option<u64>,
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
    /// (A config others may write, or one in a directory others may write, is warned of, as ssh
    /// does of its own: whoever writes it chooses the hosts and servers ifxtop runs onstat on.)
    /// A missing default file is no error; a missing explicit file is, and so is anything but a
    /// regular file (a FIFO would hold the read forever, `/dev/zero` never end), or one past
    /// [`CONFIG_CAP`].
    pub(crate) fn load(path: Option<&Path>) -> Result<Config, Error> {
        let (path, explicit) = match path {
            Some(p) => (p.to_path_buf(), true),
            None => match default_path() {
                Some(p) => (p, false),
                None => return Ok(Config::default()),
            },
        };
        match crate::files::read_text_capped(&path, CONFIG_CAP) {
            Ok(text) => {
                for w in loose_permissions(&path) {
                    eprintln!("ifxtop: warning: {}", crate::format::SafeText::new(&w));
                }
                Config::parse(&text).map_err(|e| Error::Usage(format!("{}: {e}", path.display())))
            }
            Err(e) if !explicit && e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Config::default())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::File {
                path: path.display().to_string(),
                source: e,
            }),
            Err(e) => Err(Error::Usage(crate::files::user_file_error(
                if explicit { "--config" } else { "config" },
                &path,
                &e,
            ))),
        }
    }
}

/// The most of a config file read: a few hundred bytes in practice; a megabyte holds thousands
/// of `[[instance]]` tables.
pub(crate) const CONFIG_CAP: u64 = crate::files::MB;

/// Why a config file others can write, or one in a directory others can write (they can put
/// another file in its place), is a risk: one line each; empty when it is not. A directory with
/// the sticky bit (`/tmp`) lets others add files but not replace this one, as ssh allows.
fn loose_permissions(path: &Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let Ok(meta) = std::fs::metadata(path) else {
        return out;
    };
    let mode = meta.permissions().mode();
    if mode & 0o022 != 0 {
        out.push(format!(
            "{} is writable by others (mode {:o}): whoever writes it chooses the hosts and \
             servers ifxtop runs commands on (chmod go-w)",
            path.display(),
            mode & 0o777
        ));
    }
    // Every directory on the way: one that others may write can have the file (or the
    // directory below it) replaced.
    let full = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    for dir in full.ancestors().skip(1) {
        let Ok(m) = std::fs::metadata(dir) else {
            continue;
        };
        let mode = m.permissions().mode();
        if mode & 0o022 != 0 && mode & 0o1000 == 0 {
            out.push(format!(
                "{} is in {}, a directory writable by others (mode {:o}): whoever writes there \
                 can replace it and so choose the hosts and servers ifxtop runs commands on \
                 (chmod go-w {})",
                path.display(),
                dir.display(),
                mode & 0o777,
                dir.display()
            ));
        }
    }
    out
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

    /// A config that others could replace is warned of: writable itself, or in a directory
    /// others may write (not one with the sticky bit, as `/tmp`, where only its owner may
    /// replace it).
    #[test]
    fn a_config_in_a_directory_others_may_write_is_warned_of() {
        use std::os::unix::fs::PermissionsExt;
        let top = tempfile::tempdir().expect("tempdir");
        let dir = top.path().join("shared");
        std::fs::create_dir(&dir).expect("mkdir");
        let path = dir.join("config.toml");
        std::fs::write(&path, "interval = 2.0\n").expect("write");
        let set = |p: &Path, mode: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod")
        };
        set(&path, 0o600);
        set(&dir, 0o700);
        set(top.path(), 0o700);
        assert!(
            loose_permissions(&path).is_empty(),
            "{:?}",
            loose_permissions(&path)
        );
        set(&dir, 0o777);
        let w = loose_permissions(&path);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("a directory writable by others (mode 777)"),
            "{w:?}"
        );
        // Sticky, as /tmp: others cannot replace the file.
        set(&dir, 0o1777);
        assert!(
            loose_permissions(&path).is_empty(),
            "{:?}",
            loose_permissions(&path)
        );
        // A directory further up counts as well, and the file's own mode is said apart.
        set(&dir, 0o700);
        set(top.path(), 0o770);
        set(&path, 0o666);
        let w = loose_permissions(&path);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("is writable by others (mode 666)"), "{w:?}");
        assert!(w[1].contains("(mode 770)"), "{w:?}");
        set(top.path(), 0o700);
    }

    /// A FIFO, a device or a directory given as the config is refused at once (a FIFO with no
    /// writer held the read forever; `/dev/zero` never ended), and so is a file past the cap.
    #[test]
    fn a_config_that_is_no_regular_file_is_refused_at_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.expect("mkfifo runs").success());
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; CONFIG_CAP as usize + 1]).expect("write");
        let (tx, rx) = std::sync::mpsc::channel();
        let paths = [
            fifo.clone(),
            PathBuf::from("/dev/zero"),
            dir.path().to_path_buf(),
            big,
        ];
        std::thread::spawn(move || {
            for p in paths {
                let _ = tx.send(
                    Config::load(Some(&p))
                        .map(|_| ())
                        .map_err(|e| e.to_string()),
                );
            }
        });
        let mut errors = Vec::new();
        for _ in 0..4 {
            let got = rx
                .recv_timeout(std::time::Duration::from_secs(10))
                .expect("refused at once, not read for ever");
            errors.push(got.expect_err("refused"));
        }
        assert!(
            errors[0].contains("a FIFO (named pipe), not a regular file"),
            "{errors:?}"
        );
        assert!(errors[0].starts_with("--config "), "{errors:?}");
        assert!(errors[1].contains("a character device"), "{errors:?}");
        assert!(errors[2].contains("a directory"), "{errors:?}");
        assert!(errors[3].contains("larger than 1 MB"), "{errors:?}");
    }
}
