//! Unit tests of `kubernetes`.

use super::*;
use crate::exec::launch::lines::MAX_LINE;

fn texts(out: &mut Vec<LogLine>) -> Vec<String> {
    std::mem::take(out).into_iter().map(|x| x.text).collect()
}

#[test]
fn a_reopened_log_sends_only_what_is_new() {
    let mut out = Vec::new();
    let mut l = Lines::new(Stream::Stdout, 1);
    l.push(b"journalled\nfirst\r\nsec", &mut out);
    l.push(b"ond\n", &mut out);
    assert_eq!(texts(&mut out), ["first", "second"]);
    // The stream broke; the log is read again from its start.
    l.restart();
    l.push(b"journalled\nfirst\nsecond\nthird\n", &mut out);
    l.push(&vec![b'x'; MAX_LINE + 10], &mut out);
    l.finish(&mut out);
    let got = texts(&mut out);
    assert_eq!(got[0], "third");
    assert!(got[1].ends_with("[line cut: 10 more bytes]"));
    assert_eq!(got.len(), 2);
}
