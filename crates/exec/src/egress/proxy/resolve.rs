//! How the proxy turns a name into addresses: the system resolver, or
//! names pinned to addresses (for tests).

use super::CONNECT_TIMEOUT;
use std::collections::HashMap;
use std::net::IpAddr;

/// What a name resolved to. `pinned` addresses were set by whoever built
/// the resolver (a test's override), so they count as named explicitly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub addrs: Vec<IpAddr>,
    pub pinned: bool,
}

/// How the proxy turns a name into addresses. Err (`Network`): why the
/// name did not resolve, which the proxy says in its refusal.
pub trait Resolve: Send + Sync {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> futures::future::BoxFuture<'a, Result<Resolved, crate::Error>>;
}

/// The system resolver (getaddrinfo, on a blocking thread).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> futures::future::BoxFuture<'a, Result<Resolved, crate::Error>> {
        Box::pin(async move {
            let addrs =
                tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::lookup_host((host, port)))
                    .await
                    .map_err(|_| crate::Error::Network("no answer within 10s".into()))?
                    .map_err(|e| crate::Error::Network(e.to_string()))?
                    .map(|a| a.ip())
                    .collect();
            Ok(Resolved {
                addrs,
                pinned: false,
            })
        })
    }
}

/// Names pinned to addresses (for tests: `allowed.test` → 127.0.0.1); any
/// other name does not resolve. Never consults DNS.
#[derive(Debug, Default, Clone)]
pub struct PinnedResolver(pub HashMap<String, Vec<IpAddr>>);

impl Resolve for PinnedResolver {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        _port: u16,
    ) -> futures::future::BoxFuture<'a, Result<Resolved, crate::Error>> {
        Box::pin(async move {
            self.0
                .get(host)
                .map(|a| Resolved {
                    addrs: a.clone(),
                    pinned: true,
                })
                .ok_or_else(|| crate::Error::Network(format!("`{host}` is not pinned")))
        })
    }
}
