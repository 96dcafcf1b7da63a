//! A viewer's feed (`ifxtop --attach TARGET`), joined before the screen opens, so a refusal or a
//! host that cannot be reached is said plainly (`setup.rs` names the instance as the
//! collector's recording header does).

use crate::cli::LiveArgs;
use crate::collect::follow::{self, Joined};
use crate::error::Error;
use crate::source::attach::AttachTarget;

/// The environment variable that may hold the password for serve's basic auth.
pub const PASSWORD_ENV: &str = "IFXTOP_ATTACH_PASSWORD";

/// How to reach serve's HTTP feed: its CA, the user (`--attach-user`, else the URL's) and
/// the password (`--attach-password-file`'s first line, else `PASSWORD_ENV`).
fn http_options(
    args: &LiveArgs,
    target: &crate::source::attach_http::HttpTarget,
) -> Result<crate::source::attach_http::HttpOptions, Error> {
    use crate::source::attach_http::{Credentials, HttpOptions};
    let user = args
        .share
        .attach_user
        .clone()
        .or_else(|| target.user.clone());
    let password = match &args.share.attach_password_file {
        Some(p) => {
            for w in crate::files::loose_modes(p, true) {
                eprintln!("ifxtop: warning: {w}");
            }
            let text = crate::files::read_text_capped(p, 64 << 10).map_err(|e| {
                Error::Usage(crate::files::user_file_error(
                    "--attach-password-file",
                    p,
                    &e,
                ))
            })?;
            Some(text.lines().next().unwrap_or_default().to_string())
        }
        None => std::env::var(PASSWORD_ENV).ok(),
    };
    let credentials = match (user, password) {
        (Some(user), Some(password)) => Some(Credentials { user, password }),
        (Some(user), None) => {
            return Err(Error::Usage(format!(
                "--attach {target}: the password of {user}: --attach-password-file FILE or \
                 ${PASSWORD_ENV}"
            )))
        }
        (None, Some(_)) => {
            return Err(Error::Usage(format!(
                "--attach {target}: a password and no user: --attach-user USER or https://USER@HOST"
            )))
        }
        (None, None) => None,
    };
    Ok(HttpOptions {
        ca: args.share.attach_ca.clone(),
        credentials,
    })
}

/// Joins the feed at `target`.
pub(crate) fn join(args: &LiveArgs, target: &AttachTarget) -> Result<Joined, Error> {
    let t = match target {
        AttachTarget::Http(h) => crate::source::attach_http::open(h, &http_options(args, h)?),
        _ => crate::source::attach::open(
            target,
            args.watch.ssh.ssh_config.as_deref(),
            &args.share.attach_ifxtop,
            args.share.attach_socket.as_deref(),
        ),
    }
    .map_err(|e| Error::Other(format!("--attach {target}: {e}")))?;
    let said = t.said.clone();
    follow::join(t.from, t.to, &target.to_string(), t.keep).map_err(|e| {
        // Why ssh could not: what it said (its last line), when it said anything.
        let ssh = said
            .lock()
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let last = ssh.lines().last().unwrap_or_default();
        Error::Other(if last.is_empty() {
            e
        } else {
            format!("{e}: {last}")
        })
    })
}
