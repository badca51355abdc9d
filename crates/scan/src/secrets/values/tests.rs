//! The value judgements' spec: placeholders, code, names that say
//! "secret", URL passwords, key bodies and JWTs.

use super::*;

#[test]
fn words_of_identifiers() {
    assert_eq!(
        words("SERVICE_ACCOUNT_TOKEN"),
        ["service", "account", "token"]
    );
    assert_eq!(words("APIKey"), ["api", "key"]);
    assert_eq!(words("credentialId"), ["credential", "id"]);
    assert_eq!(words("TokenStream2"), ["token", "stream", "2"]);
    assert_eq!(words("fts3-tokenizer"), ["fts", "3", "tokenizer"]);
}

#[test]
fn names() {
    for secret in [
        "SERVICE_ACCOUNT_TOKEN",
        "SHOPIFY_SHARED_SECRET",
        "HASHICORP_TOKEN",
        "TYPEFORM_TOKEN",
        "SETTLEMINT_TOKEN",
        "jfrog_identity_token",
        "dbPassword",
        "authtoken",
        "api_key",
        "ApiKey",
        "client_secret",
        "token_store_password",
        "spring.datasource.password",
        "tokenForCi",
        "GITHUB_TOKEN_FOR_DEPLOY",
        "password_of_admin",
        "SIGN_IN_TOKEN",
    ] {
        assert!(name_says_secret(secret), "{secret}");
    }
    for not in [
        "TokenStream",
        "TokenStream2",
        "credentialId",
        "password_hash",
        "token_count",
        "secretName",
        "io.jsonwebtoken",
        "csrf-token",
        "publicToken",
        "nonMatchingToken",
        "SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER",
        "tokenizer",
        "token_type",
        "keyVaultToStoreSecrets",
        "PATH_TO_PRIVATE_KEY",
        "key_for_password_manager",
    ] {
        assert!(!name_says_secret(not), "{not}");
    }
}

#[test]
fn placeholders_are_judged_whole() {
    for p in [
        "xxxxxxxxxxxx",
        "<your-key>",
        "${API_KEY}",
        "changeme123",
        "aaaaaaaaaaaa",
        "test-key-12345678",
        "dummy-password-123",
        "my_api_key_2024",
        "AKIAIOSFODNN7EXAMPLE",
        "abcdef123456",
    ] {
        assert!(is_placeholder(p), "{p}");
    }
    for real in [
        "q8Zr4Tm1Lx9Vb2Nc",
        "FLWSECK_TEST-9f3a6c1d2e4b5a7c8d9e0f1a2b3c4d5e-X",
        "test_9f3K2mQ7xLp4Rz8",
    ] {
        assert!(!is_placeholder(real), "{real}");
    }
}

#[test]
fn code_is_not_a_value() {
    for code in [
        "proc_macro2::TokenStream",
        "crate::__u32",
        "ffi::SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER",
        "settings.DB_PASSWORD",
        "token_value2",
        "DEFAULT_PASSWORD",
        "AccessTokenProvider2",
        "var.db_password",
    ] {
        assert!(is_code(code), "{code}");
    }
    for literal in [
        "dop_v1_3f9a6c1d2e4b5a7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c",
        "Summer2024Rocks",
        "q8Zr4Tm1Lx9Vb2Nc",
        "dp.pt.q8Zr4Tm1Lx9Vb2Ncq8Zr4Tm1Lx9Vb2Nc",
    ] {
        assert!(!is_code(literal), "{literal}");
    }
}

#[test]
fn types_and_arguments_in_code_are_not_values() {
    for (v, before, after, path) in [
        ("PULONG64", "    Token: ", ",", "src/um/iphlpapi.rs"),
        (
            "MI_UserCredentials_0",
            "    pub credentials: ",
            ",",
            "src/wmi.rs",
        ),
        (
            "X509CertificateTemplatePrivateKeyFlag",
            "pub const PrivateKeyExportable: ",
            " = 16i32;",
            "src/certs.rs",
        ),
        (
            "&p256::PRIVATE_KEY_OPS",
            "    private_key_ops: ",
            ",",
            "src/signing.rs",
        ),
        (
            ":Aes128Gcm",
            "16 => ConnectionTrafficSecrets:",
            " { key, iv },",
            "src/tls12.rs",
        ),
        (
            "super::super::Foundation::",
            "fn f(clienttoken : ",
            " HANDLE)",
            "src/mod.rs",
        ),
        ("authTokenValue", "  login(password: ", ")", "web/app.ts"),
    ] {
        assert!(
            in_code_position(v, before, after, path),
            "{before}{v}{after}"
        );
    }
    for (v, before, after, path) in [
        // Not a language whose strings are quoted.
        ("Xk29fLq0Zr8Tq4W", "password: ", "", "config.yaml"),
        ("Xk29fLq0Zr8Tq4W", "DB_PASSWORD=", "", ".env"),
        // Inside a string literal.
        (
            "Xk29fLq0Zr8Tq4W",
            "let c = \"Server=db;Password=",
            ";\";",
            "src/db.rs",
        ),
        (
            "Xk29fLq0Zr8Tq4W",
            "let c = \"a \\\" b;Password=",
            ";\";",
            "src/db.rs",
        ),
        ("Xk29fLq0Zr8Tq4W", "const u = `token=", "`;", "src/a.ts"),
        (
            "Xk29fLq0Zr8Tq4W",
            "c = 'Server=db;Password=",
            ";'",
            "app/db.py",
        ),
        // Followed by more words: prose, not a type.
        (
            "Xk29fLq0Zr8Tq4W",
            "let p = 1; // the password: ",
            ",",
            "src/lib.rs",
        ),
        (
            "Xk29fLq0Zr8Tq4W",
            "    # password: ",
            ",",
            "app/settings.py",
        ),
        ("Xk29fLq0Zr8Tq4W", "let token: ", " for", "src/lib.rs"),
        ("Xk29fLq0Zr8Tq4W", "let token: ", "", "src/lib.rs"),
        // A random name: maybe in a string begun on an earlier line.
        ("Xk29fLq0Zr8Tq4W", "password: ", ",", "app/settings.py"),
        ("aB3xYzQ9mNpL2kR8sT1v", "    token: ", ",", "src/lib.rs"),
        // Not an identifier.
        ("Xk29f+Lq0Zr8/Tq4W==", "token: ", ",", "src/lib.rs"),
    ] {
        assert!(
            !in_code_position(v, before, after, path),
            "{before}{v}{after} {path}"
        );
    }
}

#[test]
fn versions() {
    assert!(is_version("jjwt-jackson-0.11.2"));
    assert!(is_version("1.2.3"));
    assert!(is_version("v2.0.1-beta"));
    assert!(!is_version("q8Zr4Tm1Lx9Vb2Nc"));
}
