//! What name a TLS client asks for: the server name (SNI) of the first
//! ClientHello in a CONNECT tunnel, read from the client's first bytes
//! without decrypting anything. The proxy compares it with the CONNECT
//! host, so a tunnel opened to an allowlisted front cannot carry a hello
//! for another host behind the same CDN (domain fronting). Pure: bytes in,
//! a verdict on what they are out.

/// The most client bytes looked at before the hello must be complete
/// (TLS caps a record at 16 KiB; a hello spans at most a few).
pub(crate) const MAX_HELLO: usize = 64 * 1024;

const HANDSHAKE: u8 = 0x16;
const CLIENT_HELLO: u8 = 0x01;
const EXT_SERVER_NAME: u16 = 0x0000;
/// Encrypted Client Hello (the outer hello's name is a decoy).
const EXT_ECH: u16 = 0xfe0d;

/// What a client's first bytes are.
// `ClientHello` is the TLS message's own name.
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Hello {
    /// Not enough bytes yet to tell.
    Incomplete,
    /// Not TLS (plain HTTP inside the tunnel, SSH, …).
    NotTls,
    /// A ClientHello naming `sni` (lowercase, no trailing dot), or no name.
    ClientHello {
        sni: Option<String>,
        /// It carries an encrypted inner hello (ECH).
        encrypted: bool,
    },
    /// TLS framing that is not a readable ClientHello.
    Malformed(String),
}

/// Read the ClientHello at the start of `bytes`, gathering its handshake
/// message across records.
pub(crate) fn client_hello(bytes: &[u8]) -> Hello {
    let Some(&first) = bytes.first() else {
        return Hello::Incomplete;
    };
    if first != HANDSHAKE {
        return Hello::NotTls;
    }
    if bytes.len() >= 2 && bytes[1] != 0x03 {
        return Hello::NotTls;
    }
    // The handshake message, from as many records as it takes.
    let mut msg = Vec::new();
    let mut at = 0;
    loop {
        if bytes.len() < at + 5 {
            return Hello::Incomplete;
        }
        if bytes[at] != HANDSHAKE {
            return Hello::Malformed(format!("record type {:#04x} inside the hello", bytes[at]));
        }
        let len = u16::from_be_bytes([bytes[at + 3], bytes[at + 4]]) as usize;
        if len == 0 || len > 16384 + 2048 {
            return Hello::Malformed(format!("a record of {len} bytes"));
        }
        let end = at + 5 + len;
        if bytes.len() < end {
            return Hello::Incomplete;
        }
        msg.extend_from_slice(&bytes[at + 5..end]);
        at = end;
        if msg.len() >= 4 {
            if msg[0] != CLIENT_HELLO {
                return Hello::Malformed(format!(
                    "handshake message {:#04x}, not a ClientHello",
                    msg[0]
                ));
            }
            let want = 4 + u32::from_be_bytes([0, msg[1], msg[2], msg[3]]) as usize;
            if want > MAX_HELLO {
                return Hello::Malformed(format!("a hello of {want} bytes"));
            }
            if msg.len() >= want {
                msg.truncate(want);
                break;
            }
        }
    }
    match parse_hello(&msg[4..]) {
        Ok(h) => h,
        Err(e) => Hello::Malformed(e.into()),
    }
}

/// A cursor over the hello's body.
struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if self.b.len() < n {
            return Err("the hello ends early");
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u8(&mut self) -> Result<usize, &'static str> {
        Ok(self.take(1)?[0] as usize)
    }
    fn u16(&mut self) -> Result<usize, &'static str> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]) as usize)
    }
}

fn parse_hello(body: &[u8]) -> Result<Hello, &'static str> {
    let mut r = Reader { b: body };
    r.take(2 + 32)?; // version, random
    let n = r.u8()?;
    r.take(n)?; // session id
    let n = r.u16()?;
    r.take(n)?; // cipher suites
    let n = r.u8()?;
    r.take(n)?; // compression methods
    if r.b.is_empty() {
        return Ok(Hello::ClientHello {
            sni: None,
            encrypted: false,
        });
    }
    let n = r.u16()?;
    let mut exts = Reader { b: r.take(n)? };
    let mut sni = None;
    let mut seen = Vec::new();
    let mut encrypted = false;
    while !exts.b.is_empty() {
        let kind = exts.u16()? as u16;
        let n = exts.u16()?;
        let data = exts.take(n)?;
        if seen.contains(&kind) {
            return Err("an extension appears twice");
        }
        seen.push(kind);
        match kind {
            EXT_SERVER_NAME => sni = Some(server_name(data)?),
            EXT_ECH => encrypted = true,
            _ => {}
        }
    }
    Ok(Hello::ClientHello {
        sni: sni.flatten(),
        encrypted,
    })
}

/// The host name of a server_name extension (None: an empty list).
fn server_name(data: &[u8]) -> Result<Option<String>, &'static str> {
    let mut r = Reader { b: data };
    let n = r.u16()?;
    let mut list = Reader { b: r.take(n)? };
    let mut name: Option<String> = None;
    while !list.b.is_empty() {
        let kind = list.u8()?;
        let n = list.u16()?;
        let raw = list.take(n)?;
        if kind != 0 {
            continue;
        }
        if name.is_some() {
            return Err("two host names in one server_name");
        }
        let text = std::str::from_utf8(raw).map_err(|_| "a host name that is not text")?;
        if text.is_empty() || text.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err("a host name with spaces or control bytes");
        }
        let t = text.strip_suffix('.').unwrap_or(text).to_ascii_lowercase();
        name = Some(t);
    }
    Ok(name)
}

/// Build a ClientHello record naming `sni` (tests, here and in
/// `tests/it/egress.rs`): TLS 1.2 framing, one cipher suite, the server_name
/// extension when given, plus `extra` extensions (type, data).
pub fn sample_hello(sni: Option<&str>, extra: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let mut exts = Vec::new();
    if let Some(name) = sni {
        let n = name.as_bytes();
        let mut list = vec![0u8];
        list.extend((n.len() as u16).to_be_bytes());
        list.extend(n);
        let mut data = (list.len() as u16).to_be_bytes().to_vec();
        data.extend(list);
        exts.extend(EXT_SERVER_NAME.to_be_bytes());
        exts.extend((data.len() as u16).to_be_bytes());
        exts.extend(data);
    }
    for (kind, data) in extra {
        exts.extend(kind.to_be_bytes());
        exts.extend((data.len() as u16).to_be_bytes());
        exts.extend(data);
    }
    let mut body = vec![0x03, 0x03];
    body.extend([7u8; 32]);
    body.push(0);
    body.extend([0x00, 0x02, 0x13, 0x01]);
    body.extend([0x01, 0x00]);
    body.extend((exts.len() as u16).to_be_bytes());
    body.extend(exts);
    let mut msg = vec![CLIENT_HELLO];
    msg.extend(&(body.len() as u32).to_be_bytes()[1..]);
    msg.extend(body);
    let mut rec = vec![HANDSHAKE, 0x03, 0x01];
    rec.extend((msg.len() as u16).to_be_bytes());
    rec.extend(msg);
    rec
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(s: &str) -> Hello {
        Hello::ClientHello {
            sni: Some(s.into()),
            encrypted: false,
        }
    }

    #[test]
    fn the_name_is_read_from_a_hand_built_hello() {
        let h = sample_hello(Some("API.Example.com."), &[(0x000a, vec![0, 2, 0, 0x1d])]);
        assert_eq!(client_hello(&h), named("api.example.com"));
        // Trailing bytes (the client's next records) change nothing.
        let mut more = h.clone();
        more.extend([0x17, 0x03, 0x03, 0, 1, 0]);
        assert_eq!(client_hello(&more), named("api.example.com"));
        assert_eq!(
            client_hello(&sample_hello(None, &[])),
            Hello::ClientHello {
                sni: None,
                encrypted: false
            }
        );
        assert_eq!(
            client_hello(&sample_hello(
                Some("front.example"),
                &[(EXT_ECH, vec![1, 2, 3])]
            )),
            Hello::ClientHello {
                sni: Some("front.example".into()),
                encrypted: true
            }
        );
    }

    #[test]
    fn every_prefix_of_a_hello_is_incomplete_not_wrong() {
        let h = sample_hello(Some("api.example.com"), &[]);
        for n in 0..h.len() {
            assert_eq!(client_hello(&h[..n]), Hello::Incomplete, "{n} bytes");
        }
    }

    #[test]
    fn a_hello_split_across_records_is_gathered() {
        let h = sample_hello(Some("split.example"), &[]);
        let msg = &h[5..];
        let (a, b) = msg.split_at(9);
        let mut two = Vec::new();
        for part in [a, b] {
            two.extend([HANDSHAKE, 0x03, 0x03]);
            two.extend((part.len() as u16).to_be_bytes());
            two.extend(part);
        }
        assert_eq!(client_hello(&two), named("split.example"));
    }

    #[test]
    fn other_protocols_are_not_tls_and_hostile_hellos_are_malformed() {
        assert_eq!(client_hello(b"GET / HTTP/1.1\r\n"), Hello::NotTls);
        assert_eq!(client_hello(b"SSH-2.0-OpenSSH\r\n"), Hello::NotTls);
        assert_eq!(client_hello(&[0x16, 0x01]), Hello::NotTls);
        // Two server_name extensions, two names in one, a name with a NUL.
        let sn = |name: &[u8]| {
            let mut list = vec![0u8];
            list.extend((name.len() as u16).to_be_bytes());
            list.extend(name);
            let mut d = (list.len() as u16).to_be_bytes().to_vec();
            d.extend(list);
            d
        };
        let twice = sample_hello(Some("a.example"), &[(0, sn(b"b.example"))]);
        assert!(matches!(client_hello(&twice), Hello::Malformed(_)));
        let mut two_names = sn(b"a.example");
        two_names.extend([0u8, 0, 9]);
        two_names.extend(b"b.example");
        let l = (two_names.len() - 2) as u16;
        two_names[..2].copy_from_slice(&l.to_be_bytes());
        let h = sample_hello(None, &[(0, two_names)]);
        assert!(
            matches!(client_hello(&h), Hello::Malformed(_)),
            "{:?}",
            client_hello(&h)
        );
        let h = sample_hello(None, &[(0, sn(b"a.example\0.evil"))]);
        assert!(matches!(client_hello(&h), Hello::Malformed(_)));
        // A handshake that is not a ClientHello; a lying length.
        let mut h = sample_hello(Some("a.example"), &[]);
        h[5] = 0x02;
        assert!(matches!(client_hello(&h), Hello::Malformed(_)));
        let mut h = sample_hello(Some("a.example"), &[]);
        h[6..9].copy_from_slice(&[0xff, 0xff, 0xff]);
        assert!(matches!(client_hello(&h), Hello::Malformed(_)));
    }
}
