//! The one generic data table every list uses: column layout by terminal width, only the visible
//! rows formatted, selection, sort marker.

use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::borrow::Cow;
use std::cmp::Ordering;

/// A column of a pane's table.
#[derive(Debug, Clone, Copy)]
pub struct Col {
    pub title: &'static str,
    /// Width in cells (the flexible column's minimum).
    pub(crate) width: u16,
    /// Takes a share of the width left over, in proportion to this weight (0: fixed width).
    pub(crate) flex: u16,
    pub(crate) right: bool,
    /// Dropped when the table is narrower than this.
    pub(crate) min_table_width: u16,
}

impl Col {
    pub(crate) const fn new(title: &'static str, width: u16) -> Col {
        Col {
            title,
            width,
            flex: 0,
            right: false,
            min_table_width: 0,
        }
    }

    pub(crate) const fn right(mut self) -> Col {
        self.right = true;
        self
    }

    pub(crate) const fn flex(mut self) -> Col {
        self.flex = 1;
        self
    }

    /// A flexible column taking `weight` shares of the spare width.
    pub(crate) const fn flex_by(mut self, weight: u16) -> Col {
        self.flex = weight;
        self
    }

    /// Shown only when the table is at least `w` cells wide.
    pub(crate) const fn wide(mut self, w: u16) -> Col {
        self.min_table_width = w;
        self
    }
}

/// A sortable value, borrowed from the row it is of: sorting thousands of rows allocates
/// nothing per row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SortKey<'a> {
    Num(f64),
    Text(&'a str),
    /// A text, then a number among equal texts: an endpoint's host, then its port (`:9088`
    /// before `:40000`, which text would not give); what is waited on, then its address.
    TextNum(&'a str, f64),
    None,
}

impl<'a> SortKey<'a> {
    /// A number, or `None` (sorted last) when there is none.
    pub(crate) fn num(v: Option<f64>) -> SortKey<'a> {
        v.map_or(SortKey::None, SortKey::Num)
    }

    /// A text, or `None` (sorted last) when there is none.
    pub(crate) fn text(t: Option<&'a str>) -> SortKey<'a> {
        t.map_or(SortKey::None, SortKey::Text)
    }

    /// `compare` in the given direction, with missing values last either way: sorting by
    /// BLOCKER or SEND-Q, descending, shows the rows that have one first.
    pub(crate) fn compare_dir(&self, other: &SortKey<'_>, desc: bool) -> Ordering {
        match (self, other) {
            (SortKey::None, _) | (_, SortKey::None) => self.compare(other),
            _ if desc => self.compare(other).reverse(),
            _ => self.compare(other),
        }
    }

    pub(crate) fn compare(&self, other: &SortKey<'_>) -> Ordering {
        match (self, other) {
            (SortKey::Num(a), SortKey::Num(b)) => a.total_cmp(b),
            (SortKey::Text(a), SortKey::Text(b)) => a.cmp(b),
            (SortKey::TextNum(a, x), SortKey::TextNum(b, y)) => a.cmp(b).then(x.total_cmp(y)),
            (SortKey::None, SortKey::None) => Ordering::Equal,
            // Missing values sort last in ascending order.
            (SortKey::None, _) => Ordering::Greater,
            (_, SortKey::None) => Ordering::Less,
            // A column's keys are of one kind; were they not, numbers before texts.
            _ => self.rank().cmp(&other.rank()),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            SortKey::Num(_) => 0,
            SortKey::Text(_) => 1,
            SortKey::TextNum(..) => 2,
            SortKey::None => 3,
        }
    }
}

/// Which columns fit in `width`, and the width each gets.
pub fn layout(cols: &[Col], width: u16) -> Vec<(usize, u16)> {
    layout_for(cols, width, &[])
}

/// `layout`, where `needs[i]` is the width column `i`'s shown cells need: the spare width goes
/// first to the flexible columns always shown, left to right, up to what they need, then to
/// the optional flexible ones (what is waited on is never cut to widen a lesser column), then
/// the rest by their weights.
pub fn layout_for(cols: &[Col], width: u16, needs: &[u16]) -> Vec<(usize, u16)> {
    let mut shown: Vec<usize> = (0..cols.len())
        .filter(|&i| cols[i].min_table_width <= width)
        .collect();
    // Drop trailing fixed columns until the minimum widths fit (1 cell gap between columns).
    loop {
        let need: u16 = shown
            .iter()
            .map(|&i| cols[i].width)
            .sum::<u16>()
            .saturating_add(u16::try_from(shown.len().saturating_sub(1)).unwrap_or(u16::MAX));
        if need <= width || shown.len() <= 1 {
            break;
        }
        match shown.iter().rposition(|&i| cols[i].flex == 0) {
            Some(p) if p > 0 => {
                shown.remove(p);
            }
            _ => break,
        }
    }
    // What the table is about (its flexible columns that are always shown: WAITING ON, OBJECT)
    // gets what its cells need before an optional column (one shown only from some width on) is
    // kept: drop those from the right until it fits. A cut object or page reads wrong on a call.
    let total = |shown: &[usize]| -> u16 {
        shown.iter().map(|&i| cols[i].width).sum::<u16>()
            + u16::try_from(shown.len().saturating_sub(1)).unwrap_or(u16::MAX)
    };
    loop {
        let spare = width.saturating_sub(total(&shown));
        let deficit: u16 = shown
            .iter()
            .filter(|&&i| cols[i].flex > 0 && cols[i].min_table_width == 0)
            .map(|&i| {
                needs
                    .get(i)
                    .copied()
                    .unwrap_or(0)
                    .saturating_sub(cols[i].width)
            })
            .sum();
        if deficit <= spare {
            break;
        }
        match shown.iter().rposition(|&i| cols[i].min_table_width > 0) {
            Some(p) => {
                shown.remove(p);
            }
            None => break,
        }
    }
    let fixed = total(&shown);
    let mut spare = width.saturating_sub(fixed);
    let mut widths: Vec<(usize, u16)> = shown.iter().map(|&i| (i, cols[i].width)).collect();
    // The always-shown flexible columns first, then the optional ones: an optional column
    // left of WAITING ON or DEVICE (the I/O pane's PATH) must not take what those need.
    for optional in [false, true] {
        for (i, w) in widths.iter_mut() {
            if cols[*i].flex == 0 || (cols[*i].min_table_width > 0) != optional {
                continue;
            }
            let want = needs.get(*i).copied().unwrap_or(0).saturating_sub(*w);
            let give = want.min(spare);
            *w += give;
            spare -= give;
        }
    }
    let weights: u32 = shown.iter().map(|&i| u32::from(cols[i].flex)).sum();
    for (i, w) in widths.iter_mut() {
        let extra = (u32::from(spare) * u32::from(cols[*i].flex))
            .checked_div(weights)
            .unwrap_or(0);
        *w += u16::try_from(extra).unwrap_or(0);
    }
    widths
}

/// Fits text into `width` terminal cells (a CJK character takes two): cut with `…` when too
/// long, padded left or right.
pub(crate) fn fit(text: &str, width: u16, right: bool) -> String {
    let w = usize::from(width);
    let count = crate::format::cells(text);
    if count > w {
        if w == 0 {
            return String::new();
        }
        // A wide character that does not fit whole leaves its cell blank before the `…`.
        let s = crate::format::cut(text, w);
        let pad = w.saturating_sub(crate::format::cells(&s));
        let head = s.strip_suffix('…').unwrap_or(&s);
        format!("{head}{}…", " ".repeat(pad))
    } else if right {
        format!("{}{text}", " ".repeat(w - count))
    } else {
        format!("{text}{}", " ".repeat(w - count))
    }
}

/// Word wrap for the screen's texts (kept with the other text helpers in `format`).
pub(crate) use crate::format::wrap;

/// What a table needs from its rows: only the visible ones are asked for.
pub trait TableRows {
    fn cell(&self, row: usize, col: usize) -> Cow<'_, str>;
    fn style(&self, row: usize, theme: &Theme) -> Style;
    /// A shorter form of the cell, shown when the whole one does not fit (a table's name and
    /// database rather than `db:'owner'.table`).
    fn short_cell(&self, _row: usize, _col: usize) -> Option<Cow<'_, str>> {
        None
    }
}

/// The first visible position so that `selected` is on screen, given the previous offset.
pub(crate) fn scroll_offset(selected: usize, offset: usize, height: usize, len: usize) -> usize {
    if height == 0 || len == 0 {
        return 0;
    }
    let max_offset = len.saturating_sub(height);
    let off = if selected < offset {
        selected
    } else if selected >= offset + height {
        selected + 1 - height
    } else {
        offset
    };
    off.min(max_offset)
}

pub(crate) struct TableView<'a> {
    pub(crate) cols: &'a [Col],
    /// Row indices in display order (sorted, filtered).
    pub(crate) order: &'a [usize],
    pub(crate) rows: &'a dyn TableRows,
    pub(crate) selected: Option<usize>,
    pub(crate) offset: usize,
    pub(crate) sort: Option<(usize, bool)>,
    pub(crate) theme: &'a Theme,
}

impl TableView<'_> {
    /// Draws the header and the visible rows into `area`.
    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let body = usize::from(area.height - 1);
        let end = (self.offset + body).min(self.order.len());
        // What the flexible columns' visible cells need.
        let mut needs = vec![0u16; self.cols.len()];
        for (i, c) in self.cols.iter().enumerate() {
            if c.flex == 0 {
                continue;
            }
            for pos in self.offset..end {
                let Some(&row) = self.order.get(pos) else {
                    break;
                };
                let n = crate::format::cells(&self.rows.cell(row, i));
                needs[i] = needs[i].max(u16::try_from(n).unwrap_or(u16::MAX));
            }
        }
        let cols = layout_for(self.cols, area.width, &needs);
        let mut header = Vec::with_capacity(cols.len() * 2);
        for (n, (i, w)) in cols.iter().enumerate() {
            if n > 0 {
                header.push(Span::raw(" "));
            }
            let c = &self.cols[*i];
            let title = match self.sort {
                Some((s, desc)) if s == *i => {
                    format!("{}{}", c.title, if desc { "▼" } else { "▲" })
                }
                _ => c.title.to_string(),
            };
            header.push(Span::styled(
                fit(&title, *w, c.right),
                self.theme.column_header,
            ));
        }
        buf.set_line(area.x, area.y, &Line::from(header), area.width);
        for (line_no, pos) in (self.offset..end).enumerate() {
            let Some(&row) = self.order.get(pos) else {
                break;
            };
            let mut style = self.rows.style(row, self.theme);
            if self.selected == Some(pos) {
                style = style.patch(self.theme.selected);
            }
            let mut text = String::with_capacity(usize::from(area.width));
            for (n, (i, w)) in cols.iter().enumerate() {
                if n > 0 {
                    text.push(' ');
                }
                let mut cell = self.rows.cell(row, *i);
                if crate::format::cells(&cell) > usize::from(*w) {
                    if let Some(short) = self.rows.short_cell(row, *i) {
                        cell = short;
                    }
                }
                text.push_str(&fit(&cell, *w, self.cols[*i].right));
            }
            let y = area.y + 1 + u16::try_from(line_no).unwrap_or(u16::MAX);
            let padded = fit(&text, area.width, false);
            buf.set_stringn(area.x, y, padded, usize::from(area.width), style);
        }
    }
}

/// Unicode block sparkline of the last `width` values, scaled to their maximum.
pub(crate) fn sparkline(values: &[u64], width: usize) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let start = values.len().saturating_sub(width);
    let vals = &values[start..];
    let max = vals.iter().copied().max().unwrap_or(0);
    vals.iter()
        .map(|&v| {
            if max == 0 || v == 0 {
                ' '
            } else {
                let i = ((v as f64 / max as f64) * 7.0).round() as usize;
                BARS[i.min(7)]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    fn col() -> impl Strategy<Value = Col> {
        (
            1u16..30,
            0u16..3,
            any::<bool>(),
            prop_oneof![Just(0u16), 60u16..200],
        )
            .prop_map(|(width, flex, right, wide)| Col {
                title: "C",
                width,
                flex,
                right,
                min_table_width: wide,
            })
    }

    proptest! {
        /// Any columns at any width: the columns shown keep their order, none is shown below
        /// its table width, a fixed column gets exactly its width and a flexible one at least
        /// its own; when their minimums fit, the row fits; the first always-shown column is
        /// never dropped; a flexible always-shown column gets the width its cells need when
        /// the row has room for it.
        #[test]
        fn the_layout_fits_keeps_order_and_gives_the_flexible_what_they_need(
            cols in proptest::collection::vec(col(), 1..12),
            width in 0u16..300,
            needs in proptest::collection::vec(0u16..60, 12),
        ) {
            let got = layout_for(&cols, width, &needs);
            prop_assert!(got.windows(2).all(|p| p[0].0 < p[1].0), "in order: {got:?}");
            let gaps = u16::try_from(got.len().saturating_sub(1)).unwrap_or(u16::MAX);
            let mins: u16 = got.iter().map(|&(i, _)| cols[i].width).sum::<u16>() + gaps;
            let total: u16 = got.iter().map(|&(_, w)| w).sum::<u16>() + gaps;
            for &(i, w) in &got {
                prop_assert!(cols[i].min_table_width <= width);
                if cols[i].flex == 0 {
                    prop_assert_eq!(w, cols[i].width);
                } else {
                    prop_assert!(w >= cols[i].width);
                }
            }
            if mins <= width {
                prop_assert!(total <= width, "{total} > {width}: {got:?}");
            }
            if let Some(first) = cols.iter().position(|c| c.min_table_width == 0) {
                if first == 0 {
                    prop_assert_eq!(got.first().map(|g| g.0), Some(0));
                }
            }
            // What the always-shown flexible columns need, when every one of them fits.
            let deficit: u16 = got
                .iter()
                .filter(|&&(i, _)| cols[i].flex > 0 && cols[i].min_table_width == 0)
                .map(|&(i, _)| needs[i].saturating_sub(cols[i].width))
                .sum();
            if mins.saturating_add(deficit) <= width {
                for &(i, w) in &got {
                    if cols[i].flex > 0 && cols[i].min_table_width == 0 {
                        prop_assert!(w >= needs[i], "column {i}: {w} < its need {}", needs[i]);
                    }
                }
            }
        }
    }

    #[test]
    fn missing_values_sort_last_both_ways() {
        let (a, b, none) = (SortKey::Num(1.0), SortKey::Num(2.0), SortKey::None);
        assert_eq!(a.compare_dir(&b, false), Ordering::Less);
        assert_eq!(a.compare_dir(&b, true), Ordering::Greater);
        assert_eq!(none.compare_dir(&a, false), Ordering::Greater);
        assert_eq!(none.compare_dir(&a, true), Ordering::Greater);
        assert_eq!(a.compare_dir(&none, true), Ordering::Less);
    }

    #[test]
    fn wrap_breaks_at_blanks() {
        assert_eq!(wrap("aa bb cc dd", 5), vec!["aa bb", "cc dd"]);
        assert_eq!(wrap("abcdefgh ij", 4), vec!["abcdefgh", "ij"]);
        assert!(wrap("", 4).is_empty());
    }

    #[test]
    fn fit_cuts_and_pads() {
        assert_eq!(fit("abcdef", 4, false), "abc…");
        assert_eq!(fit("ab", 4, true), "  ab");
        assert_eq!(fit("ab", 4, false), "ab  ");
        assert_eq!(fit("ab", 0, false), "");
    }

    /// Widths are terminal cells: a CJK character takes two, so a column of CJK names is as
    /// wide as one of ASCII names (counted in characters, it was half again too wide and the
    /// columns after it moved right).
    #[test]
    fn fit_counts_terminal_cells() {
        let cells = crate::format::cells;
        assert_eq!(fit("数据", 6, false), "数据  ");
        assert_eq!(fit("数据", 6, true), "  数据");
        // Cut: what fits whole, a blank where half a character would go, then `…`.
        assert_eq!(fit("数据库服务", 6, false), "数据 …");
        assert_eq!(fit("数据库服务", 7, false), "数据库…");
        for t in ["数据库服务", "ab数c", "e\u{301}te", "plain"] {
            for w in 1..9u16 {
                assert_eq!(cells(&fit(t, w, false)), usize::from(w), "{t} {w}");
                assert_eq!(cells(&fit(t, w, true)), usize::from(w), "{t} {w}");
            }
        }
        assert_eq!(wrap("数据 库服 务", 5), vec!["数据", "库服", "务"]);
    }

    struct Names(Vec<[&'static str; 2]>);

    impl TableRows for Names {
        fn cell(&self, row: usize, col: usize) -> Cow<'_, str> {
            Cow::Borrowed(self.0[row][col])
        }
        fn style(&self, _row: usize, _theme: &Theme) -> Style {
            Style::default()
        }
    }

    /// Drawn, a column after one holding CJK, accented and ASCII names starts at the same cell
    /// on every row.
    #[test]
    fn columns_line_up_after_wide_characters() {
        let rows = Names(vec![
            ["数据库", "x"],
            ["abc", "y"],
            ["e\u{301}t\u{e9}", "z"],
            ["服务器服务器服务器服务器", "w"],
        ]);
        let cols = [Col::new("PROGRAM", 10), Col::new("N", 1)];
        let theme = Theme::plain();
        let area = Rect::new(0, 0, 12, 5);
        let mut buf = Buffer::empty(area);
        TableView {
            cols: &cols,
            order: &[0, 1, 2, 3],
            rows: &rows,
            selected: None,
            offset: 0,
            sort: None,
            theme: &theme,
        }
        .render(area, &mut buf);
        for (y, want) in [(1, "x"), (2, "y"), (3, "z"), (4, "w")] {
            assert_eq!(buf[(11, y)].symbol(), want, "row {y}");
        }
        assert_eq!(buf[(9, 4)].symbol(), "…");
    }

    #[test]
    fn layout_drops_columns_that_do_not_fit() {
        let cols = [
            Col::new("A", 10),
            Col::new("B", 20).flex(),
            Col::new("C", 10),
            Col::new("D", 10).wide(100),
        ];
        let l = layout(&cols, 80);
        assert_eq!(l.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(l.iter().map(|(_, w)| *w).sum::<u16>() + 2, 80);
        let l = layout(&cols, 35);
        assert_eq!(l.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn scroll_keeps_selection_visible() {
        assert_eq!(scroll_offset(0, 0, 10, 100), 0);
        assert_eq!(scroll_offset(15, 0, 10, 100), 6);
        assert_eq!(scroll_offset(12, 6, 10, 100), 6);
        assert_eq!(scroll_offset(3, 6, 10, 100), 3);
        assert_eq!(scroll_offset(99, 95, 10, 100), 90);
    }

    #[test]
    fn sparkline_scales_to_max() {
        assert_eq!(sparkline(&[0, 1, 2, 4, 8], 5), " ▂▃▅█");
        assert_eq!(sparkline(&[5, 5], 1), "█");
        assert_eq!(sparkline(&[], 3), "");
    }
}
