//! `serve --web.config.file FILE`: the Prometheus exporter toolkit's web configuration (the file
//! node_exporter and mysqld_exporter read): TLS with `cert_file`/`key_file`, client certificates
//! (`client_ca_file`, `client_auth_type`) and bcrypt `basic_auth_users`. Read and checked once,
//! at start: a bad file is a clear error before anything listens.

use crate::error::Error;
use base64::Engine;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The file as the toolkit writes it. Unknown keys are refused (a misspelt `basic_auth_user`
/// must not leave an exporter open), as are the toolkit's options serve does not implement.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebConfigFile {
    #[serde(default)]
    tls_server_config: Option<TlsFile>,
    #[serde(default)]
    basic_auth_users: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFile {
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    #[serde(default)]
    client_ca_file: Option<PathBuf>,
    #[serde(default)]
    client_auth_type: Option<String>,
}

/// What a request must bring: nothing, or a user and password of `basic_auth_users`.
#[derive(Debug)]
pub(crate) struct BasicAuth {
    /// User → bcrypt hash.
    users: BTreeMap<String, String>,
    /// `Authorization` values already verified (bcrypt is slow by design: a scrape every 15 s
    /// must not pay it each time). Bounded; only good ones are kept.
    verified: Mutex<Vec<String>>,
}

const VERIFIED_MAX: usize = 32;

impl BasicAuth {
    /// Whether the `Authorization` header `value` names a user with its password.
    pub(crate) fn allows(&self, value: Option<&str>) -> bool {
        let Some(value) = value else {
            return false;
        };
        if let Ok(v) = self.verified.lock() {
            if v.iter().any(|k| k == value) {
                return true;
            }
        }
        let Some(encoded) = value
            .strip_prefix("Basic ")
            .or_else(|| value.strip_prefix("basic "))
        else {
            return false;
        };
        let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(encoded.trim()) else {
            return false;
        };
        let Ok(decoded) = String::from_utf8(decoded) else {
            return false;
        };
        let Some((user, password)) = decoded.split_once(':') else {
            return false;
        };
        let ok = self
            .users
            .get(user)
            .is_some_and(|hash| bcrypt::verify(password, hash).unwrap_or(false));
        if ok {
            if let Ok(mut v) = self.verified.lock() {
                if v.len() >= VERIFIED_MAX {
                    v.remove(0);
                }
                v.push(value.to_string());
            }
        }
        ok
    }
}

/// The web configuration serve runs with.
#[derive(Debug, Default)]
pub struct WebConfig {
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
    pub(crate) auth: Option<BasicAuth>,
}

impl WebConfig {
    /// Reads and checks `path` (relative paths in it are relative to its directory, as the
    /// toolkit has them).
    pub fn load(path: &Path) -> Result<WebConfig, Error> {
        let bad =
            |why: String| Error::Usage(format!("--web.config.file {}: {why}", path.display()));
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let file: Option<WebConfigFile> =
            serde_norway::from_str(&text).map_err(|e| bad(e.to_string()))?;
        // An empty file is the toolkit's "no TLS, no auth".
        let Some(file) = file else {
            return Ok(WebConfig::default());
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        let tls = match file.tls_server_config {
            Some(t) => Some(Arc::new(tls_config(&t, dir).map_err(bad)?)),
            None => None,
        };
        let auth = match file.basic_auth_users {
            Some(users) if !users.is_empty() => {
                for (user, hash) in &users {
                    if user.contains(':') {
                        return Err(bad(format!(
                            "basic_auth_users: {user:?}: a user name has no ':'"
                        )));
                    }
                    // A hash bcrypt cannot read would refuse everyone: said now.
                    if bcrypt::verify("", hash).is_err() {
                        return Err(bad(format!(
                            "basic_auth_users: {user}: not a bcrypt hash (htpasswd -nBC 10 \"\" | tr -d ':\\n')"
                        )));
                    }
                }
                Some(BasicAuth {
                    users,
                    verified: Mutex::new(Vec::new()),
                })
            }
            _ => None,
        };
        Ok(WebConfig { tls, auth })
    }

    /// Whether a client must prove something (TLS with client certificates counts too).
    pub(crate) fn protects(&self) -> bool {
        self.tls.is_some() || self.auth.is_some()
    }
}

/// The client-certificate policies of the toolkit (Go's `tls.ClientAuthType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientAuth {
    NoClientCert,
    VerifyClientCertIfGiven,
    RequireAndVerifyClientCert,
}

fn tls_config(t: &TlsFile, dir: &Path) -> Result<rustls::ServerConfig, String> {
    let at = |p: &Path| dir.join(p);
    let cert_file = t
        .cert_file
        .as_deref()
        .map(at)
        .ok_or("tls_server_config: cert_file is missing")?;
    let key_file = t
        .key_file
        .as_deref()
        .map(at)
        .ok_or("tls_server_config: key_file is missing")?;
    let client_auth = match t.client_auth_type.as_deref() {
        None | Some("NoClientCert") => ClientAuth::NoClientCert,
        Some("VerifyClientCertIfGiven") => ClientAuth::VerifyClientCertIfGiven,
        Some("RequireAndVerifyClientCert") => ClientAuth::RequireAndVerifyClientCert,
        Some(other @ ("RequestClientCert" | "RequireAnyClientCert")) => {
            return Err(format!(
                "tls_server_config: client_auth_type {other}: a certificate nobody verifies proves nothing; use VerifyClientCertIfGiven or RequireAndVerifyClientCert with client_ca_file"
            ))
        }
        Some(other) => {
            return Err(format!(
                "tls_server_config: client_auth_type {other:?}: one of NoClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert"
            ))
        }
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert_file)
        .and_then(|i| i.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cert_file {}: {e}", cert_file.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "cert_file {}: no PEM certificate in it",
            cert_file.display()
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&key_file)
        .map_err(|e| format!("key_file {}: {e}", key_file.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = match (client_auth, &t.client_ca_file) {
        (ClientAuth::NoClientCert, None) => builder.with_no_client_auth(),
        (ClientAuth::NoClientCert, Some(_)) => {
            return Err(
                "tls_server_config: client_ca_file without a client_auth_type that verifies (VerifyClientCertIfGiven or RequireAndVerifyClientCert)"
                    .into(),
            )
        }
        (_, None) => {
            return Err(format!(
                "tls_server_config: client_auth_type {client_auth:?} needs client_ca_file (the CA that signs the clients' certificates)"
            ))
        }
        (_, Some(ca)) => {
            let ca = at(ca);
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_file_iter(&ca)
                .map_err(|e| format!("client_ca_file {}: {e}", ca.display()))?
            {
                let c = c.map_err(|e| format!("client_ca_file {}: {e}", ca.display()))?;
                roots
                    .add(c)
                    .map_err(|e| format!("client_ca_file {}: {e}", ca.display()))?;
            }
            if roots.is_empty() {
                return Err(format!(
                    "client_ca_file {}: no PEM certificate in it",
                    ca.display()
                ));
            }
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if client_auth == ClientAuth::VerifyClientCertIfGiven {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            builder.with_client_cert_verifier(verifier.build().map_err(|e| e.to_string())?)
        }
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("cert_file and key_file: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Serve refuses to listen beyond loopback with nothing to protect what it exports, unless
/// told to (`--web.insecure`).
pub(crate) fn check_exposure(
    listen: std::net::SocketAddr,
    web: &WebConfig,
    insecure: bool,
) -> Result<(), Error> {
    if listen.ip().is_loopback() || web.protects() || insecure {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "--listen {listen} is not a loopback address: whoever reaches it would read the servers' waits, sessions and SQL in plain HTTP. Give --web.config.file with tls_server_config or basic_auth_users, or --web.insecure to listen so anyway (behind a firewall)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(yaml: &str) -> Result<WebConfig, Error> {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("web.yml");
        std::fs::write(&p, yaml).expect("write");
        WebConfig::load(&p)
    }

    fn message(r: Result<WebConfig, Error>) -> String {
        match r {
            Err(Error::Usage(m)) => m,
            Err(e) => panic!("not a usage error: {e}"),
            Ok(_) => panic!("accepted"),
        }
    }

    #[test]
    fn bad_files_are_clear_errors() {
        for (yaml, said) in [
            ("basic_auth_user:\n  a: b\n", "unknown field `basic_auth_user`"),
            ("basic_auth_users:\n  prom: plain\n", "prom: not a bcrypt hash"),
            ("tls_server_config:\n  key_file: k.pem\n", "cert_file is missing"),
            (
                "tls_server_config:\n  cert_file: nowhere.pem\n  key_file: k.pem\n",
                "cert_file ",
            ),
            (
                "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  client_auth_type: RequireAnyClientCert\n",
                "nobody verifies",
            ),
            (
                "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  client_auth_type: Sometimes\n",
                "one of NoClientCert",
            ),
            ("tls_server_config: [\n", "--web.config.file"),
        ] {
            let m = message(load(yaml));
            assert!(m.contains(said), "{yaml}: {m}");
            assert!(m.starts_with("--web.config.file "), "{m}");
        }
        let m = message(WebConfig::load(Path::new("/nonexistent/web.yml")));
        assert!(m.contains("/nonexistent/web.yml"), "{m}");
    }

    #[test]
    fn basic_auth_checks_bcrypt_and_remembers_only_good_answers() {
        let hash = bcrypt::hash("s3cret", 4).expect("hash");
        let web = load(&format!("basic_auth_users:\n  prom: '{hash}'\n")).expect("loads");
        assert!(web.protects());
        let auth = web.auth.as_ref().expect("auth");
        let header = |u: &str, p: &str| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
            )
        };
        assert!(auth.allows(Some(&header("prom", "s3cret"))));
        assert!(auth.allows(Some(&header("prom", "s3cret"))));
        assert!(!auth.allows(Some(&header("prom", "wrong"))));
        assert!(!auth.allows(Some(&header("other", "s3cret"))));
        assert!(!auth.allows(Some("Basic !!!")));
        assert!(!auth.allows(Some("Bearer x")));
        assert!(!auth.allows(None));
        assert_eq!(auth.verified.lock().map(|v| v.len()).unwrap_or(0), 1);
        // An empty file: nothing required.
        assert!(!load("").expect("loads").protects());
    }

    #[test]
    fn only_loopback_listens_unprotected_unless_told() {
        let open = WebConfig::default();
        let lo: std::net::SocketAddr = "127.0.0.1:19088".parse().expect("addr");
        let lo6: std::net::SocketAddr = "[::1]:19088".parse().expect("addr");
        let any: std::net::SocketAddr = "0.0.0.0:19088".parse().expect("addr");
        assert!(check_exposure(lo, &open, false).is_ok());
        assert!(check_exposure(lo6, &open, false).is_ok());
        match check_exposure(any, &open, false) {
            Err(Error::Usage(m)) => assert!(m.contains("--web.insecure"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(check_exposure(any, &open, true).is_ok());
        let hash = bcrypt::hash("x", 4).expect("hash");
        let protected = load(&format!("basic_auth_users:\n  prom: '{hash}'\n")).expect("loads");
        assert!(check_exposure(any, &protected, false).is_ok());
    }
}
