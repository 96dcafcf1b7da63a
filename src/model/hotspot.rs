//! One buffer hot spot, opened: the object (table, index or fragment) and its dbspace, its hot
//! pages now (`chunk:page`, how many wait on each and since when), and who holds each page and
//! who waits for it, as sessions one can open.

use crate::extents::{ExtentMap, Lookup};
use crate::ids::{Addr, Sid};
use crate::store::hotspots::HotspotRow;
use crate::store::Store;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::time::Duration;

/// A page of the object with waiters in the latest `onstat -X`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotPage {
    pub chunk: u32,
    pub page: u64,
    /// The session holding the buffer (None: nobody, or not a session).
    pub owner: Option<Sid>,
    /// The sessions waiting for it.
    pub waiters: Vec<Sid>,
    /// How long it has had waiters without a break (seconds), as far as the window tells.
    pub hot_for_s: Option<f64>,
}

/// A session at a hot page: the one holding the buffer, or one waiting for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotSession {
    pub sid: Sid,
    pub user: String,
    /// Holds the buffer (else waits for it).
    pub holds: bool,
    pub chunk: u32,
    pub page: u64,
    /// How long it has waited (seconds), as tracked across samples; None for the holder.
    pub in_wait_s: Option<f64>,
    /// `in_wait_s` is a lower bound (the wait was on before ifxtop saw it begin).
    pub in_wait_s_at_least: bool,
}

/// The hot spot screen's content.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotspotView {
    pub row: HotspotRow,
    /// `index`, `table`, `fragment` or `chunk:page` (not in the extent map).
    pub kind: String,
    pub pages: Vec<HotPage>,
    /// Each page's holder, then its waiters (longest wait first), page by page.
    pub people: Vec<HotSession>,
    /// One sentence: `one page of an index, 6 waiters: all on the same leaf (...)`.
    pub verdict: String,
}

impl HotspotView {
    /// The sessions on the screen, in the order shown.
    pub fn sessions(&self) -> Vec<Sid> {
        self.people.iter().map(|p| p.sid).collect()
    }
}

/// The view of the hot spot labelled `label` (a row's `object`), from the latest `onstat -X`.
pub(crate) fn build(store: &Store, row: &HotspotRow, now: Duration) -> HotspotView {
    let base = store.settings.base_page_kb;
    let extents: Option<&ExtentMap> = store.extents();
    let sid_of: FxHashMap<Addr, Sid> = store
        .get(crate::source::key::OnstatU)
        .map(|u| u.threads.iter().map(|t| (t.address, t.sessid)).collect())
        .unwrap_or_default();
    let user_of: FxHashMap<Addr, String> = store
        .get(crate::source::key::OnstatU)
        .map(|u| {
            u.threads
                .iter()
                .map(|t| (t.address, t.user.to_string()))
                .collect()
        })
        .unwrap_or_default();
    let mut people: Vec<HotSession> = Vec::new();
    let mut kind = "chunk:page (not in the extent map)".to_string();
    let mut pages = Vec::new();
    if let Some(x) = store.get(crate::source::key::OnstatX) {
        for b in x.pools.iter().flat_map(|p| &p.buffers) {
            if b.waiters.is_empty() {
                continue;
            }
            let label = match extents.map(|m| m.lookup(b.chunk, b.page, base)) {
                Some(Lookup::Resolved(hit)) => {
                    if hit.object.description.as_str() == row.object {
                        kind = object_kind(&row.object);
                    }
                    hit.object.description.to_string()
                }
                _ => format!("{}:{}", b.chunk, b.page),
            };
            if label != row.object {
                continue;
            }
            let since = store.hotspots.page_since(&row.object, (b.chunk, b.page));
            let person = |addr: Addr, holds: bool| {
                let waits = (!holds).then(|| store.tracker.since(addr)).flatten();
                Some(HotSession {
                    sid: *sid_of.get(&addr)?,
                    user: user_of.get(&addr).cloned().unwrap_or_default(),
                    holds,
                    chunk: b.chunk,
                    page: b.page,
                    in_wait_s: (!holds)
                        .then(|| waits.map_or(0.0, |(s, _)| now.saturating_sub(s).as_secs_f64())),
                    in_wait_s_at_least: !holds && waits.is_none_or(|(_, at_least)| at_least),
                })
            };
            people.extend(b.owner.and_then(|o| person(o, true)));
            let mut waiting: Vec<HotSession> =
                b.waiters.iter().filter_map(|w| person(*w, false)).collect();
            waiting.sort_by(|a, b| {
                b.in_wait_s
                    .unwrap_or(0.0)
                    .total_cmp(&a.in_wait_s.unwrap_or(0.0))
                    .then(a.sid.cmp(&b.sid))
            });
            people.extend(waiting);
            pages.push(HotPage {
                chunk: b.chunk,
                page: b.page,
                owner: b.owner.and_then(|o| sid_of.get(&o).copied()),
                waiters: b
                    .waiters
                    .iter()
                    .filter_map(|w| sid_of.get(w).copied())
                    .collect(),
                hot_for_s: since.map(|s| now.saturating_sub(s).as_secs_f64()),
            });
        }
    }
    pages.sort_by(|a, b| {
        b.waiters
            .len()
            .cmp(&a.waiters.len())
            .then(a.page.cmp(&b.page))
    });
    // The people in the pages' order.
    let order = |p: &HotSession| {
        pages
            .iter()
            .position(|x| (x.chunk, x.page) == (p.chunk, p.page))
            .unwrap_or(usize::MAX)
    };
    people.sort_by_key(|p| order(p));
    let waiting: usize = pages.iter().map(|p| p.waiters.len()).sum();
    let verdict = match pages.len() {
        0 => format!(
            "no waiters on it now; {} waits over the window on {} page{}",
            row.waiters_window,
            row.distinct_pages,
            if row.distinct_pages == 1 { "" } else { "s" }
        ),
        1 => format!(
            "one {} page, {waiting} waiter{}: every one waits for the same buffer{}",
            kind_word(&kind),
            if waiting == 1 { "" } else { "s" },
            if row.distinct_pages <= 1 {
                " (the same page all along)"
            } else {
                ""
            }
        ),
        n => format!(
            "{n} pages of the {} with waiters, {waiting} waiters in all ({} pages over the \
             window)",
            kind_word(&kind),
            row.distinct_pages
        ),
    };
    HotspotView {
        row: row.clone(),
        kind,
        pages,
        people,
        verdict,
    }
}

/// What an object is, from the way oncheck names it: indexes are named `ix_...`/`..._idx` by
/// habit only, so only a fragment (`table[n]`-like) or the name itself is told.
fn object_kind(object: &str) -> String {
    let name = crate::parsers::oncheck_pe::split_object(object)
        .map(|n| n.name.to_string())
        .unwrap_or_else(|| object.to_string());
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("ix_") || lower.ends_with("_idx") || lower.ends_with("_ix") {
        "index".into()
    } else {
        "table".into()
    }
}

fn kind_word(kind: &str) -> &str {
    match kind {
        "index" => "index",
        "table" => "table",
        _ => "object",
    }
}
