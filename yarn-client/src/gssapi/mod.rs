//! Kerberos for clients, through the system's GSSAPI library (MIT Kerberos), loaded at run
//! time: see [`ffi`] for why. What a submitter needs from it:
//!
//! - a [`Credential`]: the user's ticket-granting ticket, from the default ticket cache (what
//!   `kinit` filled) or from a keytab (`--principal`/`--keytab`, as spark-submit takes them),
//!   checked up front so a missing or expired ticket is a clear error before anything is done;
//! - [`Credential::http_token`]: the Kerberos token for `Authorization: Negotiate` (SPNEGO,
//!   RFC 4559) to one web server, `HTTP@<host>`.
//!
//! A keytab login goes into a private in-memory ticket cache of this process: the user's
//! own cache is not touched, and no secret passes through an environment variable or a
//! command line.
//!
//! GSSAPI calls may talk to the KDC (blocking, with libkrb5's own timeouts); async callers
//! run them on a blocking thread.

mod ffi;

use std::ffi::CString;
use std::path::{Path, PathBuf};

use ffi::{BufferDesc, Gss, GssCred, GssName, KeyValueElement, KeyValueSet, OmUint32};

pub use ffi::LIBRARY;

/// Why a Kerberos login or token failed, worded for the person at the keyboard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KerberosError {
    #[error("Kerberos is needed here but the GSSAPI library {LIBRARY} cannot be loaded ({reason}); install MIT Kerberos (Debian/Ubuntu: libgssapi-krb5-2, Red Hat: krb5-libs)")]
    Library { reason: String },
    #[error("no Kerberos ticket: run kinit or pass --principal/--keytab ({detail})")]
    NoTicket { detail: String },
    /// `whose` is `of alice@REALM`, or `in the ticket cache` when the library would not say.
    #[error(
        "the Kerberos ticket {whose} has expired: run kinit again or pass --principal/--keytab"
    )]
    Expired { whose: String },
    #[error("cannot log in as {principal} with the keytab {keytab}: {detail}")]
    Keytab {
        principal: String,
        keytab: PathBuf,
        detail: String,
    },
    #[error("Kerberos: {call} failed: {detail}")]
    Gss { call: &'static str, detail: String },
}

fn gss() -> Result<&'static Gss, KerberosError> {
    ffi::library().map_err(|reason| KerberosError::Library { reason })
}

/// Where a user's Kerberos credentials come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialSource {
    /// The default ticket cache (`KRB5CCNAME`, else the system default), as `kinit` left it.
    TicketCache,
    /// A fresh login from a keytab, into a private in-memory cache.
    Keytab { principal: String, keytab: PathBuf },
}

/// A name handle, released on drop.
struct Name(GssName);

impl Name {
    fn import(g: &Gss, text: &str, kind: &'static [u8]) -> Result<Self, (OmUint32, OmUint32)> {
        let mut minor = 0;
        let mut out: GssName = std::ptr::null_mut();
        let mut buf = BufferDesc::borrowed(text.as_bytes());
        let mut oid = ffi::oid(kind);
        // SAFETY: valid pointers; the library copies the name.
        let major = unsafe { (g.import_name)(&mut minor, &mut buf, &mut oid, &mut out) };
        if major & ffi::ERROR_MASK != 0 {
            return Err((major, minor));
        }
        Ok(Name(out))
    }

    fn display(&self, g: &Gss) -> String {
        let mut minor = 0;
        let mut buf = BufferDesc::empty();
        // SAFETY: a live name; buf released below.
        let major = unsafe { (g.display_name)(&mut minor, self.0, &mut buf, std::ptr::null_mut()) };
        if major & ffi::ERROR_MASK != 0 {
            return "<unknown principal>".into();
        }
        let text = unsafe { buf.to_vec() };
        unsafe { (g.release_buffer)(&mut minor, &mut buf) };
        String::from_utf8_lossy(&text).into_owned()
    }
}

impl Drop for Name {
    fn drop(&mut self) {
        if let Ok(g) = ffi::library() {
            let mut minor = 0;
            // SAFETY: a name this wrapper owns.
            unsafe { (g.release_name)(&mut minor, &mut self.0) };
        }
    }
}

/// A user's Kerberos credentials (a GSSAPI credential handle), checked to hold a ticket that
/// has not expired when it was acquired.
pub struct Credential {
    handle: GssCred,
    principal: String,
    lifetime_secs: u32,
}

// SAFETY: MIT's credential handles lock internally; GSSAPI allows using one handle from
// several threads, and we never hand out the raw pointer.
unsafe impl Send for Credential {}
unsafe impl Sync for Credential {}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("principal", &self.principal)
            .field("lifetime_secs", &self.lifetime_secs)
            .finish()
    }
}

impl Drop for Credential {
    fn drop(&mut self) {
        if let Ok(g) = ffi::library() {
            let mut minor = 0;
            // SAFETY: a handle this wrapper owns.
            unsafe { (g.release_cred)(&mut minor, &mut self.handle) };
        }
    }
}

/// What a failed keytab login most often means (MIT's own words can mislead: a keytab
/// without the principal reports "No credentials cache found").
const KEYTAB_HINT: &str = " (does the keytab hold this principal's current key?)";

/// A private memory cache name per keytab login, so two logins never share tickets.
fn memory_cache_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "MEMORY:yarn-am-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

impl Credential {
    /// Gets the credentials and checks them now: the ticket is there and valid (from a
    /// keytab: the KDC accepted the key). Blocking; may contact the KDC.
    pub fn acquire(source: &CredentialSource) -> Result<Self, KerberosError> {
        let g = gss()?;
        let mut mech = ffi::oid(&ffi::KRB5_MECH);
        let mut mechs = ffi::OidSetDesc {
            count: 1,
            elements: &mut mech,
        };
        let handle = match source {
            CredentialSource::TicketCache => from_ticket_cache(g, &mut mechs)?,
            CredentialSource::Keytab { principal, keytab } => {
                from_keytab(g, &mut mechs, principal, keytab)?
            }
        };
        let mut cred = Credential {
            handle,
            principal: String::new(),
            lifetime_secs: 0,
        };
        cred.resolve(g, source)?;
        Ok(cred)
    }

    /// Fills in the principal and the lifetime. Asking for them makes MIT resolve the
    /// credential: a keytab login talks to the KDC here, and an expired cached ticket shows
    /// as lifetime 0, an error worded for `source`.
    fn resolve(&mut self, g: &Gss, source: &CredentialSource) -> Result<(), KerberosError> {
        let mut minor: OmUint32 = 0;
        let mut name: GssName = std::ptr::null_mut();
        let mut lifetime: OmUint32 = 0;
        // SAFETY: a live handle and valid out pointers; the name is wrapped for release.
        let major = unsafe {
            (g.inquire_cred)(
                &mut minor,
                self.handle,
                &mut name,
                &mut lifetime,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        let name = (!name.is_null()).then_some(Name(name));
        self.principal = name.as_ref().map(|n| n.display(g)).unwrap_or_default();
        if major & ffi::ERROR_MASK != 0 || lifetime == 0 {
            let expired = major & ffi::ERROR_MASK == ffi::S_CREDENTIALS_EXPIRED
                || (major & ffi::ERROR_MASK == 0 && lifetime == 0);
            let detail = g.status_text(major, minor);
            return Err(match source {
                CredentialSource::Keytab { principal, keytab } => KerberosError::Keytab {
                    principal: principal.clone(),
                    keytab: keytab.clone(),
                    detail: if expired {
                        format!("the KDC gave no valid ticket{KEYTAB_HINT}")
                    } else {
                        format!("{detail}{KEYTAB_HINT}")
                    },
                },
                CredentialSource::TicketCache if expired => KerberosError::Expired {
                    whose: if self.principal.is_empty() {
                        "in the ticket cache".into()
                    } else {
                        format!("of {}", self.principal)
                    },
                },
                CredentialSource::TicketCache => KerberosError::NoTicket { detail },
            });
        }
        self.lifetime_secs = lifetime;
        Ok(())
    }

    /// The full principal, e.g. `alice@YARN.TEST`.
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// Seconds the ticket had left when it was acquired.
    pub fn lifetime_secs(&self) -> u32 {
        self.lifetime_secs
    }

    /// The user name Hadoop derives from the principal with its default rule
    /// (`alice@REALM` and `alice/host@REALM` are `alice`).
    pub fn short_name(&self) -> &str {
        short_name(&self.principal)
    }

    /// The initial Kerberos token (an AP-REQ) for the service `service@host`, e.g.
    /// `HTTP@rm` for SPNEGO. One step, no mutual authentication: what the Negotiate
    /// scheme of RFC 4559 sends. Blocking; may ask the KDC for a service ticket.
    pub fn service_token(&self, service: &str, host: &str) -> Result<Vec<u8>, KerberosError> {
        let g = gss()?;
        let failed = |call, major, minor| KerberosError::Gss {
            call,
            detail: format!("{service}@{host}: {}", g.status_text(major, minor)),
        };
        let target = Name::import(g, &format!("{service}@{host}"), &ffi::NT_HOSTBASED_SERVICE)
            .map_err(|(ma, mi)| failed("gss_import_name", ma, mi))?;
        let mut minor = 0;
        let mut ctx: ffi::GssCtx = std::ptr::null_mut();
        let mut mech = ffi::oid(&ffi::KRB5_MECH);
        let mut out = BufferDesc::empty();
        // SAFETY: live handles, valid out pointers; the context and buffer are released below.
        let major = unsafe {
            (g.init_sec_context)(
                &mut minor,
                self.handle,
                &mut ctx,
                target.0,
                &mut mech,
                0,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut out,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        let token = unsafe { out.to_vec() };
        let mut m2 = 0;
        unsafe {
            (g.release_buffer)(&mut m2, &mut out);
            if !ctx.is_null() {
                (g.delete_sec_context)(&mut m2, &mut ctx, std::ptr::null_mut());
            }
        }
        if major & ffi::ERROR_MASK != 0 {
            if major & ffi::ERROR_MASK == ffi::S_CREDENTIALS_EXPIRED {
                return Err(KerberosError::Expired {
                    whose: format!("of {}", self.principal),
                });
            }
            return Err(failed("gss_init_sec_context", major, minor));
        }
        if token.is_empty() {
            return Err(KerberosError::Gss {
                call: "gss_init_sec_context",
                detail: format!("{service}@{host}: no token produced"),
            });
        }
        Ok(token)
    }

    /// [`Credential::service_token`] for a web server: `HTTP@host`.
    pub fn http_token(&self, host: &str) -> Result<Vec<u8>, KerberosError> {
        self.service_token("HTTP", host)
    }
}

/// Hadoop's default mapping of a principal to a user name: the first component.
pub fn short_name(principal: &str) -> &str {
    principal
        .split(['/', '@'])
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(principal)
}

/// A keytab that cannot be read is reported by name; GSSAPI would only say "no key".
fn check_keytab_file(path: &Path) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
    // MIT keytab files start with 0x05 0x02 (version 2) or 0x05 0x01.
    match bytes.get(..2) {
        Some([0x05, 0x01]) | Some([0x05, 0x02]) => Ok(()),
        _ => Err("not a Kerberos keytab file (bad header)".into()),
    }
}

/// The default ticket cache's credential for its default principal, as `kinit` left it.
fn from_ticket_cache(g: &Gss, mechs: &mut ffi::OidSetDesc) -> Result<GssCred, KerberosError> {
    let mut minor: OmUint32 = 0;
    let mut handle: GssCred = std::ptr::null_mut();
    // SAFETY: valid out pointers; no desired name = the cache's default principal.
    let major = unsafe {
        (g.acquire_cred)(
            &mut minor,
            std::ptr::null_mut(),
            ffi::C_INDEFINITE,
            mechs,
            ffi::C_INITIATE,
            &mut handle,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if major & ffi::ERROR_MASK != 0 {
        let detail = g.status_text(major, minor);
        return Err(if major & ffi::ERROR_MASK == ffi::S_CREDENTIALS_EXPIRED {
            KerberosError::Expired {
                whose: "in the ticket cache".into(),
            }
        } else {
            KerberosError::NoTicket { detail }
        });
    }
    Ok(handle)
}

/// A login as `principal` with the key in `keytab`, into a private in-memory cache.
fn from_keytab(
    g: &Gss,
    mechs: &mut ffi::OidSetDesc,
    principal: &str,
    keytab: &Path,
) -> Result<GssCred, KerberosError> {
    let keytab_err = |detail: String| KerberosError::Keytab {
        principal: principal.to_owned(),
        keytab: keytab.to_path_buf(),
        detail,
    };
    check_keytab_file(keytab).map_err(keytab_err)?;
    let name = Name::import(g, principal, &ffi::NT_KRB5_PRINCIPAL)
        .map_err(|(ma, mi)| keytab_err(g.status_text(ma, mi)))?;
    let kt = CString::new(format!("FILE:{}", keytab.display()))
        .map_err(|_| keytab_err("the path contains a NUL byte".into()))?;
    let cc = CString::new(memory_cache_name()).expect("no NUL");
    let elements = [
        KeyValueElement {
            key: c"client_keytab".as_ptr(),
            value: kt.as_ptr(),
        },
        KeyValueElement {
            key: c"ccache".as_ptr(),
            value: cc.as_ptr(),
        },
    ];
    let store = KeyValueSet {
        count: elements.len() as OmUint32,
        elements: elements.as_ptr(),
    };
    let mut minor: OmUint32 = 0;
    let mut handle: GssCred = std::ptr::null_mut();
    // SAFETY: valid pointers, all alive across the call.
    let major = unsafe {
        (g.acquire_cred_from)(
            &mut minor,
            name.0,
            ffi::C_INDEFINITE,
            mechs,
            ffi::C_INITIATE,
            &store,
            &mut handle,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if major & ffi::ERROR_MASK != 0 {
        return Err(keytab_err(format!(
            "{}{KEYTAB_HINT}",
            g.status_text(major, minor)
        )));
    }
    Ok(handle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_follow_hadoop_default_rule() {
        assert_eq!(short_name("alice@YARN.TEST"), "alice");
        assert_eq!(short_name("rm/rm@YARN.TEST"), "rm");
        assert_eq!(short_name("rm/_HOST@YARN.TEST"), "rm");
        assert_eq!(short_name("bob"), "bob");
    }

    #[test]
    fn unreadable_and_foreign_keytabs_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.keytab");
        assert!(check_keytab_file(&missing)
            .unwrap_err()
            .contains("cannot read"));
        let junk = dir.path().join("junk.keytab");
        std::fs::write(&junk, b"hello").unwrap();
        assert!(check_keytab_file(&junk)
            .unwrap_err()
            .contains("not a Kerberos keytab"));
        let ok = dir.path().join("ok.keytab");
        std::fs::write(&ok, [5u8, 2, 0, 0]).unwrap();
        assert!(check_keytab_file(&ok).is_ok());
    }

    #[test]
    fn a_missing_keytab_fails_before_any_gssapi_call() {
        // Holds whether or not the library is installed: the file check comes first... when
        // the library loads. Without it, the error names the library instead.
        let e = Credential::acquire(&CredentialSource::Keytab {
            principal: "alice@YARN.TEST".into(),
            keytab: "/nonexistent/alice.keytab".into(),
        })
        .unwrap_err();
        match e {
            KerberosError::Keytab { detail, .. } => assert!(detail.contains("cannot read")),
            KerberosError::Library { .. } => {}
            other => panic!("{other:?}"),
        }
    }
}
