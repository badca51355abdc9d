//! Throughput of the built-in secret scanner over generated change sets,
//! reported in bytes so MB/s can be read:
//!
//! * 2,000 files × 100 lines of realistic code (some lines carry secret
//!   keywords, a few carry fake secrets);
//! * one ~1 MiB text file mixing code with what the scanner decodes or
//!   joins: long base64 lines (a data URI), hex digests, string
//!   concatenations, escapes;
//! * one 1 MiB binary (pseudo-random bytes with runs of ASCII and UTF-16
//!   text).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rascal_core::model::changeset::{ChangeSet, FileChange, Operation};
use rascal_scan::secrets::{SecretScanner, SecretsOptions};
use std::hint::black_box;

const TEMPLATE: &[&str] = &[
    "use std::collections::HashMap;",
    "use crate::auth::{Token, Credentials};",
    "",
    "/// Fetch the user's profile from the API and cache it.",
    "pub async fn fetch_profile(client: &Client, user_id: u64) -> Result<Profile, Error> {",
    "    let url = format!(\"{}/users/{}\", self.base_url, user_id);",
    "    let token = self.credentials.token().await?;",
    "    let resp = client.get(&url).bearer_auth(&token).send().await?;",
    "    if !resp.status().is_success() {",
    "        return Err(Error::Http(resp.status()));",
    "    }",
    "    let body: Profile = resp.json().await?;",
    "    self.cache.insert(user_id, body.clone());",
    "    Ok(body)",
    "}",
    "",
    "#[derive(Debug, Clone, Serialize, Deserialize)]",
    "pub struct Config { pub api_key_env: String, pub timeout_secs: u64, pub retries: u32 }",
    "const DEFAULT_PASSWORD_MIN_LEN: usize = 12;",
    "let password = std::env::var(\"DB_PASSWORD\").unwrap_or_default();",
    "for (i, item) in items.iter().enumerate() { total += item.price * item.qty as f64; }",
    "// TODO: move the secret lookup into the vault client",
    "    \"integrity\": \"sha512-7Ox1qZb2VwTq8N3cL5kR9dF0aY6hJ4mS1uE2pG8iW3oX5tC7vB9nK0lQ==\",",
    "commit = \"3f9a1c2e4b5d6f7a8b9c0d1e2f3a4b5c6d7e8f90\"",
    "    assert_eq!(parse(\"key=value\"), Some((\"key\", \"value\")));",
];

/// Deterministic pseudo-random alphanumerics.
fn rnd(seed: u64, n: usize) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            A[(x % A.len() as u64) as usize] as char
        })
        .collect()
}

fn change_set(files: usize, lines: usize) -> ChangeSet {
    let files = (0..files)
        .map(|f| {
            let text: Vec<String> = (0..lines)
                .map(|l| {
                    if f % 100 == 7 && l == 42 {
                        format!("    let gh = \"ghp_{}\";", rnd((f * lines + l) as u64, 36))
                    } else if f % 250 == 3 && l == 10 {
                        format!("DB_PASSWORD={}", rnd((f * lines + l) as u64, 20))
                    } else {
                        TEMPLATE[(f * 7 + l) % TEMPLATE.len()].to_string()
                    }
                })
                .collect();
            FileChange::new(format!("src/module_{f}/mod.rs"), Operation::Modify).with_lines(&text)
        })
        .collect();
    ChangeSet {
        base: "0".repeat(40),
        tree: String::new(),
        files,
    }
}

/// Deterministic pseudo-random bytes.
fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn base64(b: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    b.chunks(3)
        .flat_map(|c| {
            let n = c.iter().fold(0u32, |a, &b| (a << 8) | b as u32) << (8 * (3 - c.len()));
            (0..=c.len()).map(move |k| A[((n >> (18 - 6 * k)) & 63) as usize] as char)
        })
        .collect()
}

/// One text file of about 1 MB (under the default 1 MiB limit), for the
/// decoding and joining paths.
fn mixed_file() -> ChangeSet {
    let mut lines = Vec::new();
    let mut size = 0;
    let mut i = 0u64;
    while size < 1000 * 1000 {
        let line = match i % 10 {
            0 => format!(
                "const ICON_{i}: &str = \"data:image/png;base64,{}\";",
                base64(&bytes(i, 3 * 1024))
            ),
            1 => format!(
                "    let digest = \"{}\";",
                bytes(i, 32)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            ),
            2 => "    let msg = \"user \" + name + \" has \" + count + \" items\";".to_string(),
            3 => "    let sep = \"\\t\\x1b[0m\\u{2014}\";".to_string(),
            4 => format!("    let url = format!(\"{{}}/api/v1/items/{i}\", base);"),
            _ => TEMPLATE[(i as usize) % TEMPLATE.len()].to_string(),
        };
        size += line.len() + 1;
        lines.push(line);
        i += 1;
    }
    ChangeSet {
        base: "0".repeat(40),
        tree: String::new(),
        files: vec![FileChange::new("src/assets.rs", Operation::Create).with_lines(&lines)],
    }
}

/// One 1 MiB binary with text runs in it.
fn binary_file() -> ChangeSet {
    let mut content = bytes(7, 1024 * 1024);
    for (k, chunk) in content.chunks_mut(4096).enumerate() {
        let text = format!("section {k}: build id {}", rnd(k as u64, 24));
        let wide: Vec<u8> = text.bytes().flat_map(|b| [b, 0]).collect();
        chunk[..text.len()].copy_from_slice(text.as_bytes());
        chunk[100..100 + wide.len()].copy_from_slice(&wide);
    }
    ChangeSet {
        base: "0".repeat(40),
        tree: String::new(),
        files: vec![FileChange::new("assets/blob.bin", Operation::Create).with_content(&content)],
    }
}

fn bench(c: &mut Criterion) {
    let scanner = SecretScanner::new(&SecretsOptions::default()).expect("scanner");
    let cs = change_set(2_000, 100);
    let bytes: u64 = cs
        .files
        .iter()
        .flat_map(|f| &f.added_lines)
        .map(|l| l.text.len() as u64 + 1)
        .sum();
    let found = scanner.scan(&cs).len();
    assert!(found >= 20, "expected the planted secrets, found {found}");

    let mut g = c.benchmark_group("secrets");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(10);
    g.bench_function("scan_2000_files_x_100_lines", |b| {
        b.iter(|| black_box(scanner.scan(black_box(&cs))))
    });
    g.finish();

    let mixed = mixed_file();
    // Nothing planted: a finding here is a false positive.
    let found = scanner.scan(&mixed);
    assert!(found.is_empty(), "false positives: {found:?}");
    let bytes: u64 = mixed.files[0]
        .added_lines
        .iter()
        .map(|l| l.text.len() as u64 + 1)
        .sum();
    let mut g = c.benchmark_group("secrets");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(10);
    g.bench_function("scan_mixed_1mb_text_file", |b| {
        b.iter(|| black_box(scanner.scan(black_box(&mixed))))
    });
    g.finish();

    let binary = binary_file();
    let found = scanner.scan(&binary);
    assert!(
        found.iter().all(|i| i.rule == "secrets/binary"),
        "false positives: {found:?}"
    );
    let mut g = c.benchmark_group("secrets");
    g.throughput(Throughput::Bytes(binary.files[0].size));
    g.sample_size(10);
    g.bench_function("scan_1mib_binary", |b| {
        b.iter(|| black_box(scanner.scan(black_box(&binary))))
    });
    g.finish();

    c.bench_function("compile_scanner", |b| {
        b.iter(|| SecretScanner::new(black_box(&SecretsOptions::default())))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
