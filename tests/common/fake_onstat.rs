//! A fake `onstat` (and `oncheck`, `dbaccess`) on PATH that behaves like the real one where
//! ifxtop relies on it: one banner, then for several options (`onstat -u -X -k`) each option's
//! output in order; `-g` options alone; an unknown option fails the whole call. Every call is
//! logged with the INFORMIXSERVER it saw.

use super::fixtures_dir;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub const BANNER: &str = "\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 2 days 03:04:05 -- 2395548 Kbytes\n\n";

pub struct FakeOnstat {
    _dir: tempfile::TempDir,
    pub bin: PathBuf,
    pub home: PathBuf,
    pub log: PathBuf,
    data: PathBuf,
    overrides: Vec<(String, String)>,
}

/// The file name an option set is kept under (`-g con` → `_g_con`).
fn key(options: &str) -> String {
    options
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// A captured output without its banner: from the option's title line (grouped options) or
/// from the first line after the banner's blank line (`-g` options).
pub fn body_of(text: &str, title: Option<&str>) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let start = match title {
        Some(t) => lines.iter().position(|l| l.trim() == t).unwrap_or(0),
        None => {
            let banner = lines
                .iter()
                .position(|l| l.contains(" Version ") || l.starts_with("Version "))
                .map_or(0, |i| i + 1);
            (banner..lines.len())
                .find(|&i| !lines[i].trim().is_empty() && !lines[i].starts_with("Blocked:"))
                .unwrap_or(banner)
        }
    };
    format!("\n{}", lines[start..].concat())
}

impl FakeOnstat {
    pub fn new() -> FakeOnstat {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        let home = dir.path().join("home");
        let data = dir.path().join("data");
        for d in [&bin, &home, &data] {
            std::fs::create_dir_all(d).expect("dir");
        }
        let log = dir.path().join("calls.log");
        let f = FakeOnstat {
            _dir: dir,
            bin,
            home,
            log,
            data,
            overrides: Vec::new(),
        };
        f.banner(BANNER);
        f
    }

    /// What every answer starts with.
    pub fn banner(&self, text: &str) -> &Self {
        std::fs::write(self.data.join("banner"), text).expect("banner");
        self
    }

    /// `onstat OPTIONS` (one option set: `-u`, `-g con`, `-g sql 812`) prints the banner and
    /// `body`.
    pub fn answer(&self, options: &str, body: &str) -> &Self {
        std::fs::write(self.data.join(key(options)), body).expect("answer");
        self
    }

    /// The calls with `option` among their options answer `bodies` in turn, the last one from
    /// then on: a server whose state moves between calls.
    pub fn answer_sequence(&self, option: &str, bodies: &[&str]) -> &Self {
        let k = key(option);
        for (i, body) in bodies.iter().enumerate() {
            std::fs::write(self.data.join(format!("{k}.{}", i + 1)), body).expect("answer");
        }
        std::fs::write(self.data.join(format!("{k}.seq")), "").expect("sequence");
        if let Some(first) = bodies.first() {
            self.answer(option, first);
        }
        self
    }

    /// `answer` with a captured output of tests/fixtures, its banner cut off.
    pub fn answer_fixture(&self, options: &str, rel: &str, title: Option<&str>) -> &Self {
        let text = std::fs::read_to_string(fixtures_dir().join(rel)).expect("fixture");
        self.answer(options, &body_of(&text, title))
    }

    /// No answer for `options` any more: a call with it fails as an unknown option would.
    pub fn forget(&self, options: &str) -> &Self {
        let _ = std::fs::remove_file(self.data.join(key(options)));
        self
    }

    /// `onstat ARGS` exactly (`*`: any call) runs this shell snippet instead.
    pub fn override_call(&mut self, args: &str, shell: &str) -> &mut Self {
        self.overrides.push((args.to_string(), shell.to_string()));
        self
    }

    /// `onstat -i` answers as the real one does (Administrator's Reference, "onstat -i"): an
    /// `onstat>` prompt, then each option read from its input (one a line, no dash) printed
    /// with the banner, prompts between, all in one process (bash, one `cat`: fast, so the
    /// collector keeps one process a tick). Each run also logs, after it printed everything, a
    /// line `i: OPTIONS start=WALL done=WALL` (seconds since the epoch). Without this, `-i`
    /// is an unknown option and the collectors run the options one by one.
    pub fn interactive(&self) -> &Self {
        std::fs::write(self.data.join("prompt"), "onstat> ").expect("prompt");
        let text = format!(
            "#!/bin/bash\n\
             start=$EPOCHREALTIME\n\
             d='{d}'\n\
             files=()\n\
             opts=\n\
             while IFS= read -r line; do\n\
               [ -z \"$line\" ] && continue\n\
               k=\"-$line\"; k=\"${{k//[^A-Za-z0-9]/_}}\"\n\
               files+=(\"$d/prompt\" \"$d/banner\")\n\
               [ -f \"$d/$k\" ] && files+=(\"$d/$k\")\n\
               opts=\"$opts,$line\"\n\
             done\n\
             files+=(\"$d/prompt\")\n\
             cat \"${{files[@]}}\"\n\
             echo \"i: ${{opts#,}} start=$start done=$EPOCHREALTIME\" >> '{log}'\n\
             exit 5\n",
            d = self.data.display(),
            log = self.log.display()
        );
        script(&self.data.join("interactive"), &text);
        self
    }

    /// Writes the executables.
    pub fn install(&self) {
        let d = self.data.display();
        let mut cases = String::new();
        for (args, body) in &self.overrides {
            let pat = if args == "*" {
                "*".to_string()
            } else {
                format!("\"{args}\"")
            };
            cases.push_str(&format!("  {pat}) {body} ;;\n"));
        }
        let onstat = format!(
            "#!/bin/sh\n\
             echo \"onstat $* INFORMIXSERVER=$INFORMIXSERVER\" >> '{log}'\n\
             for o in \"$@\"; do\n\
               k=$(printf '%s' \"$o\" | tr -c 'A-Za-z0-9' '_')\n\
               if [ -f '{d}'/\"$k.seq\" ]; then\n\
                 n=$(( $(cat '{d}'/\"$k.n\" 2>/dev/null || echo 0) + 1 ))\n\
                 echo \"$n\" > '{d}'/\"$k.n\"\n\
                 if [ -f '{d}'/\"$k.$n\" ]; then cp '{d}'/\"$k.$n\" '{d}'/\"$k\"; fi\n\
               fi\n\
             done\n\
             case \"$*\" in\n{cases}esac\n\
             if [ \"$*\" = -i ] && [ -x '{d}/interactive' ]; then exec '{d}/interactive'; fi\n\
             k=$(printf '%s' \"$*\" | tr -c 'A-Za-z0-9' '_')\n\
             if [ -f '{d}'/\"$k\" ]; then cat '{d}/banner' '{d}'/\"$k\"; exit 5; fi\n\
             if [ \"$1\" = -g ]; then cat '{d}/banner'; exit 5; fi\n\
             for o in \"$@\"; do\n\
               k=$(printf '%s' \"$o\" | tr -c 'A-Za-z0-9' '_')\n\
               if [ ! -f '{d}'/\"$k\" ]; then echo \"onstat: invalid option $o\" >&2; exit 1; fi\n\
             done\n\
             cat '{d}/banner'\n\
             for o in \"$@\"; do k=$(printf '%s' \"$o\" | tr -c 'A-Za-z0-9' '_'); cat '{d}'/\"$k\"; done\n\
             exit 5\n",
            log = self.log.display()
        );
        script(&self.bin.join("onstat"), &onstat);
    }

    /// An `oncheck -pe` printing this fixture.
    pub fn oncheck_fixture(&self, rel: &str) {
        std::fs::copy(fixtures_dir().join(rel), self.data.join("pe")).expect("fixture");
        script(
            &self.bin.join("oncheck"),
            &format!(
                "#!/bin/sh\necho \"oncheck $*\" >> '{}'\ncat '{}/pe'\n",
                self.log.display(),
                self.data.display()
            ),
        );
    }

    /// A `dbaccess` answering the systabnames query with these `partnum|name` lines.
    pub fn dbaccess_tables(&self, lines: &str) {
        std::fs::write(self.data.join("tables"), lines).expect("tables");
        script(
            &self.bin.join("dbaccess"),
            &format!(
                "#!/bin/sh\ncat > /dev/null\ncat '{}/tables'\n",
                self.data.display()
            ),
        );
    }

    /// Every call so far.
    pub fn calls(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// PATH with the fakes first.
    pub fn path(&self) -> String {
        format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }
}

fn script(p: &Path, text: &str) {
    std::fs::write(p, text).expect("script");
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}
