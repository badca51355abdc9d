//! Unit tests of `proxy`.

use super::*;

#[test]
fn connect_and_absolute_uris_parse_and_anything_else_is_refused() {
    let r = Request::parse(b"CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert_eq!(r.target.to_string(), "api.example.com:443");
    assert!(r.forward.is_none());
    let r = Request::parse(
            b"GET http://Example.com:8080/a/b?c HTTP/1.1\r\nHost: example.com\r\nProxy-Authorization: Basic x\r\nproxy-connection: keep-alive\r\n\r\n",
        )
        .unwrap();
    assert_eq!(r.target.to_string(), "example.com:8080");
    assert_eq!(
        String::from_utf8(r.forward.unwrap()).unwrap(),
        "GET /a/b?c HTTP/1.1\r\nHost: example.com\r\n\r\n"
    );
    let r = Request::parse(b"GET http://example.com?q HTTP/1.0\r\n\r\n").unwrap();
    assert!(String::from_utf8(r.forward.unwrap())
        .unwrap()
        .starts_with("GET /?q HTTP/1.0"));
    for bad in [
        &b"GET / HTTP/1.1\r\n\r\n"[..],
        b"GET https://example.com/ HTTP/1.1\r\n\r\n",
        b"CONNECT example.com HTTP/1.1\r\n\r\n",
        b"CONNECT user@example.com:443 HTTP/1.1\r\n\r\n",
        b"CONNECT a b:443 HTTP/1.1\r\n\r\n",
        b"\xff\xfe\r\n\r\n",
        b"CONNECT example.com:443 SPDY/3\r\n\r\n",
    ] {
        assert!(
            Request::parse(bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}
