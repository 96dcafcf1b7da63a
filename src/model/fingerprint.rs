//! A statement's fingerprint: its text with the literals replaced by `?`, as PostgreSQL's
//! `pg_stat_statements` keys statements, so the same statement run with other values (a
//! customer number, a date) adds up to one line of database time.
//!
//! Hand-written rather than a SQL parser crate: only the lexical level is needed (strings,
//! numbers, comments), Informix's own lexical rules differ from the dialects those crates know
//! (a double-quoted word is a string unless `DELIMIDENT` is set; `{ ... }` is a comment; `--+`,
//! `{+` and `/*+` hold optimizer directives, kept), a statement cut at its first 200
//! characters must still normalise (an unterminated string is a literal to the end), and a
//! parser would add more to the binary than its whole size budget leaves.
//!
//! What changes: string literals (`'...'`, `"..."`) and numbers become `?`; a list of values
//! after `IN` becomes `(?)`; comments go (directives stay); blanks collapse to one; letters
//! outside literals are lower-cased (Informix names do not depend on case). Host variables and
//! placeholders (`?`, `:name`) stay.

/// The fingerprint of `sql`.
pub fn fingerprint(sql: &str) -> String {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    // Whether a blank is owed before the next word.
    let mut blank = false;
    let push = |out: &mut String, blank: &mut bool, s: &str| {
        if *blank && !out.is_empty() {
            out.push(' ');
        }
        *blank = false;
        out.push_str(s);
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                blank = true;
                i += 1;
            }
            b'\'' | b'"' => {
                i = end_of_string(b, i);
                push(&mut out, &mut blank, "?");
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                let end = b[i..]
                    .iter()
                    .position(|&x| x == b'\n')
                    .map_or(b.len(), |p| i + p);
                if b.get(i + 2) == Some(&b'+') {
                    push(&mut out, &mut blank, &collapse(&sql[i..end]));
                } else {
                    blank = true;
                }
                i = end;
            }
            b'{' => {
                let end = b[i..]
                    .iter()
                    .position(|&x| x == b'}')
                    .map_or(b.len(), |p| i + p + 1);
                if b.get(i + 1) == Some(&b'+') {
                    push(&mut out, &mut blank, &collapse(&sql[i..end]));
                } else {
                    blank = true;
                }
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = sql[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
                if b.get(i + 2) == Some(&b'+') {
                    push(&mut out, &mut blank, &collapse(&sql[i..end]));
                } else {
                    blank = true;
                }
                i = end;
            }
            b'0'..=b'9' => {
                let end = end_of_word(b, i);
                if is_number(&b[i..end]) {
                    push(&mut out, &mut blank, "?");
                } else {
                    push(&mut out, &mut blank, &sql[i..end].to_ascii_lowercase());
                }
                i = end;
            }
            b'.' if b.get(i + 1).is_some_and(u8::is_ascii_digit) && !ends_in_word(&out, blank) => {
                let end = end_of_word(b, i + 1);
                push(&mut out, &mut blank, "?");
                i = end;
            }
            _ if is_word(c) => {
                let end = end_of_word(b, i);
                push(&mut out, &mut blank, &sql[i..end].to_ascii_lowercase());
                i = end;
            }
            _ => {
                // One character of punctuation (or a whole UTF-8 character).
                let len = sql[i..].chars().next().map_or(1, char::len_utf8);
                push(&mut out, &mut blank, &sql[i..i + len]);
                i += len;
            }
        }
    }
    collapse_in_lists(&out)
}

/// Blanks collapsed to one, for a directive kept as written.
fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The end of the string literal opening at `i` (its quote doubled inside it is part of it):
/// the input's end when it is not closed (a statement cut short).
fn end_of_string(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() {
        if b[j] == q {
            if b.get(j + 1) == Some(&q) {
                j += 2;
                continue;
            }
            return j + 1;
        }
        j += 1;
    }
    b.len()
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// The end of a word or a number starting at `i`: letters, digits, `_`, `$`, a decimal point,
/// an exponent's sign.
fn end_of_word(b: &[u8], i: usize) -> usize {
    let mut j = i;
    while j < b.len() {
        let c = b[j];
        let exponent_sign = (c == b'+' || c == b'-')
            && j > i
            && matches!(b[j - 1], b'e' | b'E')
            && b[i].is_ascii_digit()
            && b.get(j + 1).is_some_and(u8::is_ascii_digit);
        if is_word(c) || (c == b'.' && b[i].is_ascii_digit()) || exponent_sign {
            j += 1;
        } else {
            break;
        }
    }
    j
}

/// `12`, `3.5`, `1e-3`, `2.`: a number (not `1st` or `9x`).
fn is_number(w: &[u8]) -> bool {
    let mut seen_e = false;
    for (k, &c) in w.iter().enumerate() {
        match c {
            b'0'..=b'9' | b'.' => {}
            b'e' | b'E' if !seen_e && k > 0 => seen_e = true,
            b'+' | b'-' if seen_e => {}
            _ => return false,
        }
    }
    true
}

/// Whether the text so far ends in a word (a `.` after it is a name's, `t.5` is not a number).
fn ends_in_word(out: &str, blank: bool) -> bool {
    !blank && out.as_bytes().last().copied().is_some_and(is_word)
}

/// `in (?, ?, ?)` → `in (?)`: a list of values is one statement whatever its length.
fn collapse_in_lists(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(p) = find_in_list(rest) {
        let (before, list) = rest.split_at(p);
        out.push_str(before);
        // A list cut short (no `)`) stays as it is.
        let close = list.find(')');
        let inner = close.map_or("", |c| &list[1..c]);
        if let Some(close) =
            close.filter(|_| !inner.trim().is_empty() && inner.split(',').all(|v| v.trim() == "?"))
        {
            out.push_str("(?)");
            rest = list.get(close + 1..).unwrap_or("");
        } else {
            out.push('(');
            rest = &list[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Where the `(` of an `in (` is in `s`.
fn find_in_list(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(p) = s[from..].find("in (").map(|p| from + p) {
        let word_start = p == 0 || !is_word(b[p - 1]);
        if word_start {
            return Some(p + 3);
        }
        from = p + 4;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::fingerprint;

    #[test]
    fn literals_become_placeholders() {
        assert_eq!(
            fingerprint(
                "update customer set balance = balance + 10.00\n  where customer_num = 104"
            ),
            "update customer set balance = balance + ? where customer_num = ?"
        );
        assert_eq!(
            fingerprint("select * from orders where order_num = 1001"),
            fingerprint("SELECT *  FROM orders WHERE order_num = 1877")
        );
        assert_eq!(
            fingerprint("select customer_num from customer where zipcode = '94086' and lname = \"O''Brien\""),
            "select customer_num from customer where zipcode = ? and lname = ?"
        );
        assert_eq!(
            fingerprint("insert into t values (1, 'it''s', -2.5e-3, 3.)"),
            "insert into t values (?, ?, -?, ?)"
        );
        assert_eq!(
            fingerprint("delete from order_log where logged_at < current - 90 units day"),
            "delete from order_log where logged_at < current - ? units day"
        );
    }

    #[test]
    fn names_with_digits_stay() {
        assert_eq!(
            fingerprint("select t1.col2 from tab_2024 t1, t2 x where t1.a = :h1 and b = ?"),
            "select t1.col2 from tab_2024 t1, t2 x where t1.a = :h1 and b = ?"
        );
        assert_eq!(fingerprint("select .5 from t"), "select ? from t");
    }

    #[test]
    fn lists_of_values_collapse() {
        assert_eq!(
            fingerprint("select * from items where order_num in (1001, 1002, 1003)"),
            "select * from items where order_num in (?)"
        );
        assert_eq!(
            fingerprint("select * from items where order_num IN (1001)"),
            "select * from items where order_num in (?)"
        );
        // A subquery is not a list of values.
        assert_eq!(
            fingerprint("select * from t where a in (select b from u where c = 1)"),
            "select * from t where a in (select b from u where c = ?)"
        );
        // `join (` is not `in (`.
        assert_eq!(fingerprint("select max(1) from t"), "select max(?) from t");
    }

    #[test]
    fn comments_go_directives_stay() {
        assert_eq!(
            fingerprint("select a -- the app's trace id 4711\nfrom t {note} where b = 2 /* x */"),
            "select a from t where b = ?"
        );
        assert_eq!(
            fingerprint("select --+ INDEX(t ix_t)\n a from t where b = 2"),
            "select --+ INDEX(t ix_t) a from t where b = ?"
        );
        assert_eq!(
            fingerprint("select {+ FULL(t) } a from t"),
            "select {+ FULL(t) } a from t"
        );
    }

    /// A statement cut at its first characters still normalises: an open string is a literal
    /// to the end.
    #[test]
    fn a_cut_statement_normalises() {
        assert_eq!(
            fingerprint("select * from t where name = 'Smi"),
            "select * from t where name = ?"
        );
        assert_eq!(
            fingerprint("select * from t where a in (1, 2"),
            "select * from t where a in (?, ?"
        );
        assert_eq!(fingerprint("select /* open"), "select");
        assert_eq!(fingerprint(""), "");
    }

    proptest::proptest! {
        /// Never panics, and normalising twice changes nothing more.
        #[test]
        fn any_text_normalises_once(s in "\\PC{0,80}") {
            let f = fingerprint(&s);
            proptest::prop_assert_eq!(fingerprint(&f), f);
        }
    }
}
