//! Throughput of the built-in secret scanner over a generated change set:
//! 2,000 files × 100 lines of realistic code (some lines carry secret
//! keywords, a few carry fake secrets). Reported in bytes so MB/s can be read.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rascal::layers::secrets::{SecretScanner, SecretsOptions};
use rascal::model::changeset::{ChangeSet, FileChange, Operation};
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

    c.bench_function("compile_scanner", |b| {
        b.iter(|| SecretScanner::new(black_box(&SecretsOptions::default())))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
