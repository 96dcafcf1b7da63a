//! A throw-away CA and certificates for the TLS tests (rcgen): serve's and its clients'.

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, SanType,
};
use std::path::{Path, PathBuf};

/// A CA, a server certificate for 127.0.0.1 and a client certificate, as PEM files in `dir`.
pub struct Pki {
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

pub fn pki(dir: &Path) -> Pki {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "ifxtop test CA");
    let ca =
        CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("key")).expect("the CA");
    let leaf = |name: &str, usage: ExtendedKeyUsagePurpose| {
        let mut p = CertificateParams::new(vec!["localhost".to_string()]).expect("params");
        p.subject_alt_names
            .push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
        p.distinguished_name.push(DnType::CommonName, name);
        p.extended_key_usages = vec![usage];
        let key = KeyPair::generate().expect("key");
        let cert = p.signed_by(&key, &ca).expect("signed");
        (cert.pem(), key.serialize_pem())
    };
    let (server_cert, server_key) = leaf("ifxtop serve", ExtendedKeyUsagePurpose::ServerAuth);
    let (client_cert, client_key) = leaf("prometheus", ExtendedKeyUsagePurpose::ClientAuth);
    // Written 0600, as a key must be (serve warns of one others can read).
    let write = |name: &str, text: &str| {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join(name);
        std::fs::write(&p, text).expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        p
    };
    Pki {
        ca: write("ca.pem", &ca.pem()),
        server_cert: write("server.pem", &server_cert),
        server_key: write("server-key.pem", &server_key),
        client_cert: write("client.pem", &client_cert),
        client_key: write("client-key.pem", &client_key),
    }
}
