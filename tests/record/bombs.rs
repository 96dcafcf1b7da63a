//! Decompression bombs: a recording whose zstd unpacks to a line of gigabytes, or whose
//! database-time track frame does. Every decompression and every line is bounded by the
//! outputs' memory budget (128 MB): the line or the frame is read past with a message, and the
//! rest replays. The bombs are made here, by hand (a zstd frame of RLE blocks: four bytes a
//! 128 kB block), never kept in the repository.

use ifxtop::collect::record::parse_recording;
use std::io::Write;
use std::process::Command;

/// RLE blocks of `len` bytes, each `byte` (4 bytes a 128 kB block).
fn rle_blocks(out: &mut Vec<u8>, byte: u8, mut len: u64, last: bool) {
    const BLOCK: u64 = 128 * 1024;
    while len > 0 {
        let n = len.min(BLOCK);
        len -= n;
        let is_last = last && len == 0;
        let header = (n as u32) << 3 | 1 << 1 | u32::from(is_last);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(byte);
    }
}

/// Raw blocks of `data`.
fn raw_block(out: &mut Vec<u8>, data: &[u8], last: bool) {
    for (i, piece) in data.chunks(128 * 1024).enumerate() {
        let is_last = last && (i + 1) * 128 * 1024 >= data.len();
        let header = (piece.len() as u32) << 3 | u32::from(is_last);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.extend_from_slice(piece);
    }
}

/// One zstd frame (no content size, no checksum, a 1 MB window) of `before`, then `fill` bytes
/// of `byte`, then `after`.
fn bomb_frame(before: &[u8], byte: u8, fill: u64, after: &[u8]) -> Vec<u8> {
    let mut out = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 10 << 3];
    raw_block(&mut out, before, false);
    rle_blocks(&mut out, byte, fill, false);
    raw_block(&mut out, after, true);
    out
}

fn sample_line(t: u32) -> String {
    let u = include_str!("../fixtures/onstat-u/oninit-onstat-u.txt");
    serde_json::json!({"t": t, "source": "onstat -u", "exit": 5, "stdout": u}).to_string()
}

const HEADER: &str =
    r#"{"ifxtop_recording":1,"server":"x","started":"2026-11-22T00:00:00Z","host":null}"#;

/// A line longer than the budget (200 MB of one output, unpacked from under 16 kB with two samples) is read past
/// with a message naming it, and the samples around it replay; so does a frame asking for a
/// window past zstd's 128 MB default (refused, not allocated).
#[test]
fn a_line_past_the_budget_is_skipped_and_the_rest_replays() {
    let before = format!(
        "{HEADER}\n{}\n{{\"t\":2,\"source\":\"onstat -u\",\"stdout\":\"",
        sample_line(1)
    );
    let after = format!("\"}}\n{}\n", sample_line(3));
    let bytes = bomb_frame(before.as_bytes(), b'a', 200 << 20, after.as_bytes());
    assert!(bytes.len() < 16_000, "{}", bytes.len());
    let rec = parse_recording(&bytes);
    assert_eq!(rec.len(), 2, "{:?}", rec.skipped);
    let all = rec.skipped.join("\n");
    assert!(
        all.contains("line 3: 200.0 MB long, past the 128 MB memory budget of an output: skipped"),
        "{all}"
    );
    // The replay reads the file again, past the long line, to both samples.
    let mut player_samples = 0;
    for (_, raw) in rec.samples() {
        assert!(raw.stdout.len() < 10_000);
        player_samples += 1;
    }
    assert_eq!(player_samples, 2);

    // A window of 2 GB asked for: refused by the decoder, said, nothing replayed.
    let mut huge = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 21 << 3];
    raw_block(
        &mut huge,
        format!("{HEADER}\n{}\n", sample_line(1)).as_bytes(),
        true,
    );
    let rec = parse_recording(&huge);
    assert!(rec.is_empty(), "{:?}", rec.skipped);
    assert!(
        rec.skipped
            .iter()
            .any(|s| s.contains("compressed stream ends early")),
        "{:?}",
        rec.skipped
    );
}

/// Runs `ifxtop args` with its address space limited to 1 GB (`ulimit -v`): the exit code, and
/// standard output and error.
fn run_limited(args: &[&str]) -> (Option<i32>, String, String) {
    let mut line = String::from("ulimit -v 1048576 && exec \"$0\"");
    for i in 1..=args.len() {
        line.push_str(&format!(" \"${i}\""));
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg(line)
        .arg(env!("CARGO_BIN_EXE_ifxtop"))
        .args(args)
        .env_remove("INFORMIXSERVER")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .expect("sh runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The reliability test's bomb: 123 kB of zstd whose second line unpacks to 4 GB. Under a 1 GB
/// address space `snapshot --replay` replays the other samples and says which line it skipped
/// (it aborted, allocating the line).
#[test]
fn snapshot_replays_past_a_four_gigabyte_line_in_one_gigabyte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bomb.jsonl.zst");
    let before = format!(
        "{HEADER}\n{}\n{{\"t\":2,\"source\":\"onstat -u\",\"stdout\":\"",
        sample_line(1)
    );
    let after = format!("\"}}\n{}\n", sample_line(3));
    let bytes = bomb_frame(before.as_bytes(), b'a', 4 << 30, after.as_bytes());
    assert!(bytes.len() < 140_000, "{}", bytes.len());
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(&bytes))
        .expect("written");
    let p = path.display().to_string();
    let (code, out, err) = run_limited(&["snapshot", "--replay", &p, "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("line 3: 4.0 GB long, past the 128 MB memory budget of an output: skipped"),
        "{err}"
    );
    let snap: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(snap["at_s"], 3.0, "{snap}");
}

/// Walks the frames of a zstd file: each one's offset and length, and whether it is one of the
/// database-time track's (a skippable frame tagged `IFXTRACK`).
fn frames(bytes: &[u8]) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let magic = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
            let size = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4 bytes"));
            let len = 8 + size as usize;
            out.push((at, len, &bytes[at + 8..at + 16] == b"IFXTRACK"));
            at += len;
        } else {
            let len = zstd::zstd_safe::find_frame_compressed_size(&bytes[at..]).expect("a frame");
            out.push((at, len, false));
            at += len;
        }
    }
    out
}

/// A recording whose first database-time track frame unpacks to 4 GB: `ifxtop ash` in a 1 GB
/// address space reads the window from the outputs instead and says why (it cost 2 GB and a
/// minute, or aborted).
#[test]
fn ash_reads_past_a_track_frame_bomb_in_one_gigabyte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let whole = dir.path().join("whole.jsonl.zst");
    let w = whole.display().to_string();
    let made = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args([
            "snapshot", "--demo", "--at", "150", "--format", "json", "--record", &w,
        ])
        .output()
        .expect("ifxtop runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let bytes = std::fs::read(&whole).expect("read");
    let (at, len, _) = frames(&bytes)
        .into_iter()
        .find(|f| f.2)
        .expect("a track frame");
    // The track frame's content: the tag, then a zstd frame of 4 GB.
    let bomb = bomb_frame(b"", b'\n', 4 << 30, b"");
    let mut frame = 0x184D_2A5Eu32.to_le_bytes().to_vec();
    frame.extend_from_slice(&(8 + bomb.len() as u32).to_le_bytes());
    frame.extend_from_slice(b"IFXTRACK");
    frame.extend_from_slice(&bomb);
    let mut hostile = bytes[..at].to_vec();
    hostile.extend_from_slice(&frame);
    hostile.extend_from_slice(&bytes[at + len..]);
    let path = dir.path().join("bomb.jsonl.zst");
    std::fs::write(&path, &hostile).expect("written");
    let p = path.display().to_string();
    let (code, out, err) =
        run_limited(&["ash", "--window", "30", "--format", "json", "--replay", &p]);
    assert_eq!(code, Some(0), "{err}");
    let ash: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(ash["read_from"], "outputs", "{ash}");
    let note = ash["read_from_note"].as_str().unwrap_or_default();
    assert!(
        note.contains("unpacks to more than 128 MB (the memory budget of outputs)"),
        "{note}"
    );
    assert!(ash["samples"].as_u64().is_some_and(|n| n >= 25), "{ash}");
}
