//! The extent map kept on disk between runs (user cache directory, atomic write, versioned).
//!
//! The file holds the RAW `oncheck -pe` text under a one-line header, not a serialized map:
//! re-parsing takes a fraction of a second, and a newer ifxtop reads an old cache with its better
//! parser. Header: `ifxtop-extent-cache 2 server=NAME created=SECS chunks=KEY bytes=N sum=HEX`
//! where KEY lists the report's chunks as `number:path` (escaped), so a chunk added since is
//! noticed, and N and HEX are the length and checksum of the text after the header, so a file
//! cut short (even at a line boundary) or edited by hand is refused and rebuilt, not half used.

use crate::error::{Error, Result};
use crate::extents::ExtentMap;
use crate::parsers::oncheck_pe::{self, PeEvent};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The first word of every cache file.
const MAGIC: &str = "ifxtop-extent-cache";
/// Bumped when the header changes; a cache of another version is an error (the caller rebuilds).
pub const FORMAT_VERSION: u32 = 2;

/// The chunks a report lists: number and path, sorted by number. Two reports of one instance
/// with equal keys have the same chunks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChunkKey(pub Vec<(u32, String)>);

impl ChunkKey {
    pub fn from_map(map: &ExtentMap) -> ChunkKey {
        ChunkKey::from_pairs(map.chunks().iter().map(|c| (c.number, c.path.as_str())))
    }

    /// From any list of chunks (e.g. `onstat -d`'s, to check a cache against the live instance).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (u32, &'a str)>) -> ChunkKey {
        let mut v: Vec<(u32, String)> =
            pairs.into_iter().map(|(n, p)| (n, p.to_string())).collect();
        v.sort();
        v.dedup_by_key(|x| x.0);
        ChunkKey(v)
    }

    /// `1:/data/root,2:/data/dbs1`, with `%`, `,`, blanks and control characters `%XX`-escaped.
    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        for (i, (n, p)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&n.to_string());
            out.push(':');
            out.push_str(&escape(p));
        }
        out
    }

    pub(crate) fn decode(s: &str) -> Option<ChunkKey> {
        if s.is_empty() {
            return Some(ChunkKey::default());
        }
        s.split(',')
            .map(|item| {
                let (n, p) = item.split_once(':')?;
                Some((n.parse().ok()?, unescape(p)?))
            })
            .collect::<Option<Vec<_>>>()
            .map(ChunkKey)
    }
}

/// A cache file read back: the report's text, its map, and when it was made.
#[derive(Debug)]
pub struct Cached {
    pub text: String,
    pub map: ExtentMap,
    pub created: SystemTime,
    /// How old the report was when loaded (zero if the clock went backwards).
    pub age: Duration,
    pub key: ChunkKey,
    pub(crate) path: PathBuf,
}

/// The user's cache directory for ifxtop (`~/.cache/ifxtop` on Linux), if the platform has one.
pub fn default_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "ifxtop").map(|d| d.cache_dir().to_path_buf())
}

/// The cache file of `server` in `dir`.
pub fn path_for(dir: &Path, server: &str) -> PathBuf {
    dir.join(format!("{}.oncheck-pe", escape_file_name(server)))
}

/// Saves the raw report of `server` atomically: a temporary file in the same directory, fsync,
/// rename. Refuses text that is not an `oncheck -pe` report (nothing worth caching).
pub fn save(dir: &Path, server: &str, text: &str) -> Result<PathBuf> {
    save_at(dir, server, text, SystemTime::now())
}

/// [`save`] with the creation time given (tests).
pub fn save_at(dir: &Path, server: &str, text: &str, created: SystemTime) -> Result<PathBuf> {
    let key = key_of_text(text)?;
    let secs = created
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let header = format!(
        "{MAGIC} {FORMAT_VERSION} server={} created={secs} chunks={} bytes={} sum={}\n",
        escape(server),
        key.encode(),
        text.len(),
        checksum(text)
    );
    // Table names and chunk paths are nobody else's business: 0700 directories, 0600 files
    // (tempfile creates its files 0600).
    std::os::unix::fs::DirBuilderExt::mode(fs::DirBuilder::new().recursive(true), 0o700)
        .create(dir)
        .map_err(|e| file_error(dir, e))?;
    // A symbolic link in the directory's place is refused: tightening it would chmod whatever
    // it points at, and the cache would be written there.
    if fs::symlink_metadata(dir)
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
    {
        return Err(Error::Other(format!(
            "{}: the cache directory is a symbolic link: refused (remove it, or set another)",
            dir.display()
        )));
    }
    // A directory an older ifxtop made 0755 is tightened too (it is ifxtop's own).
    {
        use std::os::unix::fs::PermissionsExt;
        let loose = fs::metadata(dir)
            .map(|m| m.permissions().mode() & 0o077 != 0)
            .unwrap_or(false);
        if loose {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .map_err(|e| file_error(dir, e))?;
        }
    }
    let path = path_for(dir, server);
    let written = (|| -> std::io::Result<()> {
        let mut f = tempfile::Builder::new()
            .prefix(&format!(".{}.", escape_file_name(server)))
            .tempfile_in(dir)?;
        f.write_all(header.as_bytes())?;
        f.write_all(text.as_bytes())?;
        f.as_file().sync_all()?;
        f.persist(&path).map_err(|e| e.error)?;
        // Make the rename itself durable; not every platform can open a directory, so best effort.
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    written.map_err(|e| file_error(&path, e))?;
    Ok(path)
}

/// Loads the cache of `server` from `dir`: `Ok(None)` when there is none; an error when the file
/// is of another format version, another server, garbage, or its text no longer matches its key.
pub fn load(dir: &Path, server: &str) -> Result<Option<Cached>> {
    load_at(dir, server, SystemTime::now())
}

/// [`load`] with the current time given, so the age is testable.
pub fn load_at(dir: &Path, server: &str, now: SystemTime) -> Result<Option<Cached>> {
    let path = path_for(dir, server);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(file_error(&path, e)),
    };
    let mut text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    let bad = |why: String| Error::Other(format!("{}: {why}", path.display()));
    let header_len = text
        .find('\n')
        .ok_or_else(|| bad("not an ifxtop extent cache (no header line)".into()))?;
    let header = text.get(..header_len).unwrap_or("");
    let h = parse_header(header).map_err(bad)?;
    if h.server != server {
        return Err(bad(format!(
            "cache of server '{}', not '{server}'",
            h.server
        )));
    }
    text.drain(..=header_len);
    if text.len() as u64 != h.bytes {
        return Err(bad(format!(
            "cached report is {} bytes, its header says {} (cut short or edited): rebuilding",
            text.len(),
            h.bytes
        )));
    }
    if checksum(&text) != h.sum {
        return Err(bad(
            "cached report does not match its checksum (edited or damaged): rebuilding".into(),
        ));
    }
    // Checked: a damaged header's `created=18446744073709551615` overflows the clock.
    let Some(created) = UNIX_EPOCH.checked_add(Duration::from_secs(h.created)) else {
        return Err(bad(format!(
            "cache created at an impossible time ({}): rebuilding",
            h.created
        )));
    };
    if created > now + FUTURE_SLACK {
        return Err(bad(format!(
            "cache created {}s in the future (clock changed or file edited): rebuilding",
            created.duration_since(now).unwrap_or_default().as_secs()
        )));
    }
    let map = ExtentMap::from_oncheck_pe(&text)
        .map_err(|e| bad(format!("cached report does not parse: {e}")))?;
    let key = ChunkKey::from_map(&map);
    if key != h.key {
        return Err(bad("cached report does not match its chunk key".into()));
    }
    Ok(Some(Cached {
        text,
        map,
        created,
        age: now.duration_since(created).unwrap_or_default(),
        key,
        path,
    }))
}

struct Header {
    server: String,
    created: u64,
    key: ChunkKey,
    bytes: u64,
    sum: String,
}

/// How far in the future a cache's `created` may lie (clocks of one host step a little).
const FUTURE_SLACK: Duration = Duration::from_secs(300);

/// The checksum a cache header carries for its text: 64-bit FNV-1a, in hex. It finds damage and
/// hand edits (the file is the user's own, 0600; this is not a signature).
pub fn checksum(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn parse_header(line: &str) -> std::result::Result<Header, String> {
    let mut words = line.split(' ');
    if words.next() != Some(MAGIC) {
        return Err("not an ifxtop extent cache".into());
    }
    let version = words.next().unwrap_or("");
    if version != FORMAT_VERSION.to_string() {
        return Err(format!(
            "cache format version '{version}', this ifxtop reads {FORMAT_VERSION}"
        ));
    }
    let mut field = |name: &str| {
        words
            .next()
            .and_then(|w| w.strip_prefix(name))
            .ok_or_else(|| format!("damaged cache header: no {name}"))
    };
    let server = unescape(field("server=")?).ok_or("damaged cache header: server")?;
    let created = field("created=")?
        .parse()
        .map_err(|_| "damaged cache header: created".to_string())?;
    let key = ChunkKey::decode(field("chunks=")?).ok_or("damaged cache header: chunks")?;
    let bytes = field("bytes=")?
        .parse()
        .map_err(|_| "damaged cache header: bytes".to_string())?;
    let sum = field("sum=")?.to_string();
    if words.next().is_some() {
        return Err("damaged cache header: more than it should hold".into());
    }
    Ok(Header {
        server,
        created,
        key,
        bytes,
        sum,
    })
}

/// The chunk list of a report, by a parse that keeps nothing else.
fn key_of_text(text: &str) -> Result<ChunkKey> {
    let mut pairs = Vec::new();
    oncheck_pe::visit(text, |ev| {
        if let PeEvent::Chunk(row) = ev {
            pairs.push((row.chunk, row.path));
        }
    })?;
    Ok(ChunkKey::from_pairs(pairs))
}

fn file_error(path: &Path, source: std::io::Error) -> Error {
    Error::File {
        path: path.display().to_string(),
        source,
    }
}

fn needs_escape(c: char) -> bool {
    matches!(c, '%' | ',' | ' ' | '=') || c.is_control()
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if needs_escape(c) {
            let mut b = [0u8; 4];
            for byte in c.encode_utf8(&mut b).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn unescape(s: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(s.len());
    let mut it = s.bytes();
    while let Some(b) = it.next() {
        if b == b'%' {
            let hi = (it.next()? as char).to_digit(16)?;
            let lo = (it.next()? as char).to_digit(16)?;
            bytes.push(u8::try_from(hi * 16 + lo).ok()?);
        } else {
            bytes.push(b);
        }
    }
    String::from_utf8(bytes).ok()
}

/// Server names are `[A-Za-z0-9_]` in practice; anything else becomes `%XX` so a name can never
/// leave the directory or hide the file.
fn escape_file_name(server: &str) -> String {
    let mut out = String::with_capacity(server.len());
    for b in server.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.is_empty() {
        out.push_str("%00");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_round_trips() {
        for s in ["", "a b", "/x/y,z", "100%", "ä=b\n"] {
            assert_eq!(unescape(&escape(s)).as_deref(), Some(s));
        }
        assert_eq!(escape_file_name("../x"), "%2E%2E%2Fx");
        let k = ChunkKey::from_pairs([(2, "/b c"), (1, "/a,b")]);
        assert_eq!(k.encode(), "1:/a%2Cb,2:/b%20c");
        assert_eq!(ChunkKey::decode(&k.encode()), Some(k));
    }
}
