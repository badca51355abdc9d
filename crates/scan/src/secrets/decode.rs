//! Undoing what hides a secret from a regex: base64 and hex blobs in a
//! text, and the runs of text in binary bytes (ASCII and UTF-16).

/// Blobs shorter than this (in characters) are not decoded as base64: the
/// base64 of a 20-character AWS key id is 28 long.
pub const MIN_BASE64: usize = 20;
/// Hex blobs shorter than this are not decoded.
pub const MIN_HEX: usize = 32;
/// Runs of text shorter than this are not kept from bytes.
pub const MIN_RUN: usize = 8;

/// At most this many bytes of a line are kept on each side of a decoded or
/// joined part, so that `password = <decoded>` is still an assignment while
/// the work stays linear in the line's length.
pub const CONTEXT: usize = 256;

/// The (at most [`CONTEXT`]) bytes of `text` before byte `at`.
pub fn before(text: &str, at: usize) -> &str {
    let mut from = at.saturating_sub(CONTEXT);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    &text[from..at]
}

/// The (at most [`CONTEXT`]) bytes of `text` from byte `at`.
pub fn after(text: &str, at: usize) -> &str {
    let mut to = (at + CONTEXT).min(text.len());
    while !text.is_char_boundary(to) {
        to -= 1;
    }
    &text[at..to]
}

/// A blob in a text that may be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub start: usize,
    pub end: usize,
    pub encoding: &'static str,
}

/// One entry per byte: its base64 value (both alphabets: `+`/`-` are 62,
/// `/`/`_` are 63), or 0xff.
const B64: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 26 {
        t[b'A' as usize + i] = i as u8;
        t[b'a' as usize + i] = 26 + i as u8;
        i += 1;
    }
    let mut d = 0;
    while d < 10 {
        t[b'0' as usize + d] = 52 + d as u8;
        d += 1;
    }
    t[b'+' as usize] = 62;
    t[b'-' as usize] = 62;
    t[b'/' as usize] = 63;
    t[b'_' as usize] = 63;
    t
};

fn is_b64(b: u8) -> bool {
    B64[b as usize] != 0xff
}

/// The blobs in `text` long enough to decode: runs of base64 characters
/// (with their `=` padding) and of hex digits (after an optional `0x`).
pub fn tokens(text: &str) -> Vec<Token> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    // A blob worth decoding is at least MIN_BASE64 long, so it covers one
    // of the positions sampled every MIN_BASE64 bytes: look around those.
    let mut p = MIN_BASE64 - 1;
    while p < b.len() {
        if !is_b64(b[p]) {
            p += MIN_BASE64;
            continue;
        }
        let mut i = p;
        while i > 0 && is_b64(b[i - 1]) {
            i -= 1;
        }
        let mut j = p + 1;
        while j < b.len() && is_b64(b[j]) {
            j += 1;
        }
        let mut end = j;
        while end < b.len() && end - j < 2 && b[end] == b'=' {
            end += 1;
        }
        let mut start = i;
        if b[i..j].starts_with(b"0x") || b[i..j].starts_with(b"0X") {
            start += 2;
        }
        if j - start >= MIN_HEX && b[start..j].iter().all(u8::is_ascii_hexdigit) {
            out.push(Token {
                start,
                end: j,
                encoding: "hex",
            });
        } else if j - i >= MIN_BASE64 && mixed_case(&b[i..j]) {
            out.push(Token {
                start: i,
                end,
                encoding: "base64",
            });
        }
        // The next blob starts after this run (`b[j]` is not base64).
        p = j + MIN_BASE64;
    }
    out
}

/// Is `s` made only of base64 characters (and `=` padding)? Hex digits
/// are base64 characters too.
pub fn is_blob(s: &str) -> bool {
    s.bytes().all(|b| is_b64(b) || b == b'=')
}

/// Both upper- and lower-case letters: base64 of text always has them;
/// identifiers in one case (`MAX_RETRY_COUNT_FOR_UPLOADS`,
/// `fetch_user_profile_cache`, CSS `btn-primary-outline-large`) do not, and
/// are not decoded.
fn mixed_case(b: &[u8]) -> bool {
    b.iter().any(u8::is_ascii_uppercase) && b.iter().any(u8::is_ascii_lowercase)
}

/// What `blob` decodes to. Base64 is also tried from its second, third and
/// fourth character when the whole does not decode to text, since a blob
/// may be glued to the text before it (`path/QUtJQ…`).
pub fn decodings(blob: &str, encoding: &str) -> Vec<Vec<u8>> {
    if encoding == "hex" {
        let even = &blob[..blob.len() & !1];
        return hex::decode(even).into_iter().collect();
    }
    let b = blob.trim_end_matches('=').as_bytes();
    let first = base64(b);
    if as_text(&first).is_some() {
        return vec![first];
    }
    let mut out = vec![first];
    for skip in 1..4.min(b.len()) {
        out.push(base64(&b[skip..]));
    }
    out
}

/// Decode base64 characters (either alphabet, no padding), up to the
/// first other byte; a trailing partial group is dropped.
fn base64(b: &[u8]) -> Vec<u8> {
    let n = b.iter().position(|&c| !is_b64(c)).unwrap_or(b.len());
    let v = |c: u8| B64[c as usize] as u32;
    let mut out = Vec::with_capacity(n / 4 * 3 + 2);
    let mut groups = b[..n].chunks_exact(4);
    for g in &mut groups {
        let x = v(g[0]) << 18 | v(g[1]) << 12 | v(g[2]) << 6 | v(g[3]);
        out.extend_from_slice(&[(x >> 16) as u8, (x >> 8) as u8, x as u8]);
    }
    match *groups.remainder() {
        [a, b] => out.push(((v(a) << 18 | v(b) << 12) >> 16) as u8),
        [a, b, c] => {
            let x = v(a) << 18 | v(b) << 12 | v(c) << 6;
            out.extend_from_slice(&[(x >> 16) as u8, (x >> 8) as u8]);
        }
        _ => {}
    }
    out
}

/// `bytes` as text when all of it is printable UTF-8 (tabs and line breaks
/// allowed).
pub fn as_text(bytes: &[u8]) -> Option<&str> {
    let s = std::str::from_utf8(bytes).ok()?;
    let printable = !s.is_empty()
        && s.chars()
            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'));
    printable.then_some(s)
}

/// A run of text found in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// Byte offset of its first character (of the non-NUL byte, in UTF-16).
    pub offset: usize,
    /// Bytes per character: 1 (ASCII) or 2 (UTF-16).
    pub stride: usize,
    pub text: String,
}

impl Run {
    /// The offset just past its last character.
    pub fn end(&self) -> usize {
        self.offset + self.text.len() * self.stride
    }
}

fn printable(b: u8) -> bool {
    b == b'\t' || (0x20..0x7f).contains(&b)
}

/// The runs of at least [`MIN_RUN`] printable ASCII characters in `bytes`,
/// and of UTF-16 (little- and big-endian) ASCII characters, in order of
/// offset.
pub fn text_runs(bytes: &[u8]) -> Vec<Run> {
    let mut out = Vec::new();
    let mut start = 0;
    // Two UTF-16 characters in a row (`\0 c \0 c`), or no UTF-16 at all:
    // looked for in the same pass, at each NUL.
    let mut wide = false;
    for (i, &b) in bytes.iter().enumerate() {
        if !printable(b) {
            if i - start >= MIN_RUN {
                out.push(ascii_run(bytes, start, i));
            }
            start = i + 1;
            if b == 0 && !wide {
                wide = bytes
                    .get(i..i + 4)
                    .is_some_and(|w| w[2] == 0 && printable(w[1]) && printable(w[3]));
            }
        }
    }
    if bytes.len() - start >= MIN_RUN {
        out.push(ascii_run(bytes, start, bytes.len()));
    }
    if wide {
        for align in 0..2 {
            utf16_runs(bytes, align, true, &mut out);
            utf16_runs(bytes, align, false, &mut out);
        }
        out.sort_by_key(|r| (r.offset, r.stride));
    }
    out
}

fn ascii_run(bytes: &[u8], start: usize, end: usize) -> Run {
    Run {
        offset: start,
        stride: 1,
        // Printable ASCII: valid UTF-8 as it is.
        text: String::from_utf8_lossy(&bytes[start..end]).into_owned(),
    }
}

/// UTF-16 runs starting at even (`align` 0) or odd offsets: pairs of a
/// printable byte and a NUL (little-endian) or a NUL and a printable byte.
fn utf16_runs(bytes: &[u8], align: usize, little: bool, out: &mut Vec<Run>) {
    let mut text = String::new();
    let mut start = align;
    let mut i = align;
    while i + 1 < bytes.len() {
        let (c, z) = if little {
            (bytes[i], bytes[i + 1])
        } else {
            (bytes[i + 1], bytes[i])
        };
        if z == 0 && printable(c) {
            if text.is_empty() {
                // The offset of the character's own byte.
                start = if little { i } else { i + 1 };
            }
            text.push(c as char);
        } else {
            if text.len() >= MIN_RUN {
                out.push(Run {
                    offset: start,
                    stride: 2,
                    text: std::mem::take(&mut text),
                });
            }
            text.clear();
        }
        i += 2;
    }
    if text.len() >= MIN_RUN {
        out.push(Run {
            offset: start,
            stride: 2,
            text,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &[u8], url: bool) -> String {
        const STD: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let a = if url { URL } else { STD };
        let mut out = String::new();
        for chunk in s.chunks(3) {
            let n =
                chunk.iter().fold(0u32, |acc, &b| (acc << 8) | b as u32) << (8 * (3 - chunk.len()));
            for k in 0..=chunk.len() {
                out.push(a[((n >> (18 - 6 * k)) & 63) as usize] as char);
            }
        }
        while !out.len().is_multiple_of(4) {
            out.push('=');
        }
        out
    }

    #[test]
    fn base64_both_alphabets_and_misaligned() {
        let plain = b"token=>?>?>?~~~ and more text here";
        for url in [false, true] {
            let enc = b64(plain, url);
            let t = tokens(&format!("x = \"{enc}\";"));
            assert_eq!(t.len(), 1, "{t:?}");
            assert_eq!(t[0].encoding, "base64");
            let blob = &format!("x = \"{enc}\";")[t[0].start..t[0].end];
            assert_eq!(decodings(blob, "base64")[0], plain.to_vec());
        }
        // Glued to a path: found from a later character.
        let glued = format!("ab/{}", b64(plain, false));
        let all = decodings(&glued, "base64");
        assert!(
            all.iter()
                .any(|d| d.windows(10).any(|w| w == b"and more t")),
            "{all:?}"
        );
    }

    #[test]
    fn base64_of_every_length() {
        let plain: Vec<u8> = (0u8..=255).collect();
        for n in 0..40 {
            for url in [false, true] {
                let enc = b64(&plain[..n], url);
                assert_eq!(
                    base64(enc.trim_end_matches('=').as_bytes()),
                    &plain[..n],
                    "{n}"
                );
            }
        }
    }

    #[test]
    fn hex_and_short_blobs() {
        let t = tokens("k = 0x414b4941494f53464f444e4e374558414d504c45 ok");
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].encoding, "hex");
        assert!(tokens("short QUtJQQ== and abcdef0123").is_empty());
        assert!(tokens("MAX_RETRY_COUNT_FOR_UPLOADS fetch_user_profile_cache").is_empty());
        // Wherever a blob sits relative to the sampled positions.
        let blob = "QUtJQUlPU0ZPRE5ON0VYQU1Q";
        for pad in 0..45 {
            let text = format!("{}:{blob}:{}", ".".repeat(pad), "yy ".repeat(pad));
            let t = tokens(&text);
            assert_eq!(t.len(), 1, "{pad}: {t:?}");
            assert_eq!(&text[t[0].start..t[0].end], blob);
        }
        let two = format!("{blob} {blob}");
        assert_eq!(tokens(&two).len(), 2);
        assert_eq!(as_text(b"AKIA\n"), Some("AKIA\n"));
        assert_eq!(as_text(b"\x00AKIA"), None);
        assert_eq!(as_text(b""), None);
    }

    #[test]
    fn runs_in_bytes() {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0".to_vec();
        bytes.extend_from_slice(b"hello world!");
        bytes.push(0xff);
        for c in "wide text here".bytes() {
            bytes.extend_from_slice(&[c, 0]);
        }
        bytes.extend_from_slice(&[0xff, 0xff]);
        let runs = text_runs(&bytes);
        let texts: Vec<&str> = runs.iter().map(|r| r.text.as_str()).collect();
        assert!(texts.contains(&"hello world!"), "{texts:?}");
        assert!(texts.contains(&"wide text here"), "{texts:?}");
        let wide = runs.iter().find(|r| r.text == "wide text here").unwrap();
        assert_eq!((wide.offset, wide.stride), (23, 2));
        assert!(text_runs(b"short\0tiny\0").is_empty());
    }
}
