//! One `onstat` call for several options: `onstat -u -X -k -p` prints the banner once, then each
//! option's output in the order given, each starting with its title line. `split` cuts such an
//! output back into what each option prints alone (the banner, then its section), so every
//! option's own parser reads it unchanged.

/// The title line each groupable option's output starts with (after the banner).
pub(crate) fn title_of(option: &str) -> Option<&'static str> {
    Some(match option {
        "-u" => "Userthreads",
        "-X" => "Buffers (Access)",
        "-k" => "Locks",
        "-p" => "Profile",
        "-l" => "Physical Logging",
        "-s" => "Latches with lock or userthread set",
        "-x" => "Transactions",
        "-d" | "-D" => "Dbspaces",
        _ => return None,
    })
}

/// The output of `onstat OPTIONS` cut into one text per option: the banner (everything before
/// the first title) followed by that option's section. `None` when a title is missing or out of
/// order (the caller then runs the options one by one). The off-line message, which is the whole
/// answer of any onstat command when the server is down, is every option's answer.
pub fn split(text: &str, options: &[&str]) -> Option<Vec<String>> {
    let titles: Vec<&str> = options
        .iter()
        .map(|o| title_of(o))
        .collect::<Option<Vec<_>>>()?;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // Where each title line is, in order, each after the one before.
    let mut starts: Vec<usize> = Vec::with_capacity(titles.len());
    let mut from = 0;
    for title in &titles {
        let at = (from..lines.len()).find(|&i| lines[i].trim() == *title);
        match at {
            Some(i) => {
                starts.push(i);
                from = i + 1;
            }
            None => {
                if starts.is_empty() && super::header::is_offline_message(text.trim()) {
                    return Some(vec![text.to_string(); options.len()]);
                }
                return None;
            }
        }
    }
    let banner: String = lines[..starts[0]].concat();
    let mut out = Vec::with_capacity(titles.len());
    for (k, &start) in starts.iter().enumerate() {
        let mut end = starts.get(k + 1).copied().unwrap_or(lines.len());
        // The blank line before the next title separates the sections: alone, this option's
        // output ends without it (and the banner already ends with one).
        if k + 1 < starts.len() {
            while end > start + 1 && lines[end - 1].trim().is_empty() {
                end -= 1;
            }
        }
        let mut part = banner.clone();
        part.push_str(&lines[start..end].concat());
        out.push(part);
    }
    Some(out)
}
