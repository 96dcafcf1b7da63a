//! The feed's recent history, kept compressed: the frames of the last minutes, and the last
//! output of every source older than that (a source polled every 10 minutes), so a viewer who
//! joins builds a full snapshot at once. Bounded in bytes and in sources.

use std::collections::VecDeque;
use std::sync::Arc;

/// One zstd frame of the feed: samples collected together.
pub(crate) struct Frame {
    pub(crate) bytes: Arc<[u8]>,
    /// Its samples' sources and times, in the frame's order (one line each).
    pub(crate) samples: Vec<(String, f64)>,
    /// Its text's length uncompressed.
    pub(crate) text_len: usize,
    pub(crate) last_t: f64,
}

/// The last output of a source, kept after its frame left the window.
struct Kept {
    t: f64,
    bytes: Arc<[u8]>,
}

/// How long a source's last output is kept past the window (the slowest polled source is read
/// every 10 minutes).
const KEEP_FOR_S: f64 = 1200.0;
/// Sources whose last output is kept past the window (per-session sources come and go).
const MAX_KEPT: usize = 2048;

pub(crate) struct History {
    window_s: f64,
    max_bytes: u64,
    frames: VecDeque<Frame>,
    bytes: u64,
    /// Each source's latest sample time.
    latest: rustc_hash::FxHashMap<String, f64>,
    kept: rustc_hash::FxHashMap<String, Kept>,
    kept_bytes: u64,
}

impl History {
    pub(crate) fn new(window_s: f64, max_bytes: u64) -> Self {
        History {
            window_s,
            max_bytes,
            frames: VecDeque::new(),
            bytes: 0,
            latest: Default::default(),
            kept: Default::default(),
            kept_bytes: 0,
        }
    }

    /// Compressed bytes held.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes + self.kept_bytes
    }

    /// Adds `frame`, then lets go of what is older than the window (or beyond the bytes).
    pub(crate) fn push(&mut self, frame: Frame) {
        for (src, t) in &frame.samples {
            self.latest.insert(src.clone(), *t);
            if let Some(k) = self.kept.remove(src) {
                self.kept_bytes -= k.bytes.len() as u64;
            }
        }
        let now = frame.last_t;
        self.bytes += frame.bytes.len() as u64;
        self.frames.push_back(frame);
        while let Some(first) = self.frames.front() {
            let old = first.last_t < now - self.window_s;
            let over = self.bytes > self.max_bytes && self.frames.len() > 1;
            if !(old || over) {
                break;
            }
            if let Some(f) = self.frames.pop_front() {
                self.bytes -= f.bytes.len() as u64;
                self.keep_latest(&f);
            }
        }
        self.trim_kept(now);
    }

    /// Keeps the samples of `gone` that are still their source's latest, each in a frame of
    /// its own.
    fn keep_latest(&mut self, gone: &Frame) {
        let still: Vec<usize> = gone
            .samples
            .iter()
            .enumerate()
            .filter(|(_, (src, t))| self.latest.get(src) == Some(t))
            .map(|(i, _)| i)
            .collect();
        if still.is_empty() {
            return;
        }
        let Ok(text) = zstd::bulk::decompress(&gone.bytes, gone.text_len) else {
            return;
        };
        for (i, line) in text.split_inclusive(|b| *b == b'\n').enumerate() {
            if !still.contains(&i) {
                continue;
            }
            let (src, t) = &gone.samples[i];
            if let Ok(c) = zstd::bulk::compress(line, super::LEVEL) {
                self.kept_bytes += c.len() as u64;
                if let Some(old) = self.kept.insert(
                    src.clone(),
                    Kept {
                        t: *t,
                        bytes: c.into(),
                    },
                ) {
                    self.kept_bytes -= old.bytes.len() as u64;
                }
            }
        }
    }

    /// Lets go of kept outputs too old, too many or too big (the oldest first).
    fn trim_kept(&mut self, now: f64) {
        let max = self.max_bytes / 4;
        if self.kept.len() <= MAX_KEPT
            && self.kept_bytes <= max
            && self.kept.values().all(|k| k.t >= now - KEEP_FOR_S)
        {
            return;
        }
        let mut by_age: Vec<(f64, String)> =
            self.kept.iter().map(|(s, k)| (k.t, s.clone())).collect();
        by_age.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (t, src) in by_age {
            if self.kept.len() <= MAX_KEPT && self.kept_bytes <= max && t >= now - KEEP_FOR_S {
                break;
            }
            if let Some(k) = self.kept.remove(&src) {
                self.kept_bytes -= k.bytes.len() as u64;
            }
        }
        // The latest times of sources no longer kept nor in the window are forgotten too.
        let frames = &self.frames;
        let kept = &self.kept;
        self.latest
            .retain(|src, t| kept.contains_key(src) || frames.iter().any(|f| f.last_t >= *t));
    }

    /// What a viewer who joins now is sent: the kept outputs in time order, then the window.
    pub(crate) fn replay(&self) -> Vec<Arc<[u8]>> {
        let mut kept: Vec<&Kept> = self.kept.values().collect();
        kept.sort_by(|a, b| a.t.total_cmp(&b.t));
        kept.iter()
            .map(|k| k.bytes.clone())
            .chain(self.frames.iter().map(|f| f.bytes.clone()))
            .collect()
    }

    /// The latest sample time.
    pub(crate) fn now(&self) -> Option<f64> {
        self.frames.back().map(|f| f.last_t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(samples: &[(&str, f64)]) -> Frame {
        let text: String = samples
            .iter()
            .map(|(s, t)| format!("{{\"t\":{t},\"source\":\"{s}\"}}\n"))
            .collect();
        Frame {
            bytes: zstd::bulk::compress(text.as_bytes(), 3).unwrap().into(),
            samples: samples.iter().map(|(s, t)| (s.to_string(), *t)).collect(),
            text_len: text.len(),
            last_t: samples.iter().map(|s| s.1).fold(0.0, f64::max),
        }
    }

    fn lines(h: &History) -> Vec<String> {
        let mut out = Vec::new();
        for f in h.replay() {
            let text = zstd::stream::decode_all(&f[..]).unwrap();
            out.extend(String::from_utf8(text).unwrap().lines().map(String::from));
        }
        out
    }

    #[test]
    fn a_joiner_gets_the_window_and_the_last_output_of_every_older_source() {
        let mut h = History::new(180.0, 1 << 20);
        h.push(frame(&[("dbaccess sysmaster -", 1.0), ("onstat -u", 1.0)]));
        for t in 2..400 {
            h.push(frame(&[("onstat -u", t as f64)]));
        }
        let l = lines(&h);
        // The slow source's only output, though 400 s old, then the last 181 s of onstat -u.
        assert_eq!(l[0], r#"{"t":1,"source":"dbaccess sysmaster -"}"#);
        assert_eq!(l.len(), 1 + 181, "{:?}", &l[..3]);
        assert_eq!(l[1], r#"{"t":219,"source":"onstat -u"}"#);
        // A newer output of a kept source replaces it.
        h.push(frame(&[("dbaccess sysmaster -", 400.0)]));
        assert!(lines(&h).iter().all(|l| !l.contains("\"t\":1,")));
    }

    #[test]
    fn it_is_bounded_in_bytes() {
        let mut h = History::new(1e9, 4096);
        for t in 0..2000 {
            h.push(frame(&[(&format!("onstat -g ses {t}"), t as f64)]));
        }
        assert!(h.bytes() <= 4096 + 4096 / 4 + 200, "{}", h.bytes());
    }
}
