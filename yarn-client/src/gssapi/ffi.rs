//! The few GSSAPI (RFC 2744) functions we call, looked up at run time in MIT Kerberos'
//! `libgssapi_krb5.so.2` with `dlopen`, so building needs neither the library nor its
//! headers (no bindgen, no libclang), and a machine without Kerberos only fails when a
//! Kerberos login is actually asked for.
//!
//! The types mirror `<gssapi/gssapi.h>` on LP64 Unix: `OM_uint32` is 32 bits, lengths of
//! buffers are `size_t`, handles are opaque pointers.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

pub type OmUint32 = u32;
pub type GssName = *mut c_void;
pub type GssCred = *mut c_void;
pub type GssCtx = *mut c_void;

#[repr(C)]
pub struct OidDesc {
    pub length: OmUint32,
    pub elements: *const c_void,
}

#[repr(C)]
pub struct BufferDesc {
    pub length: usize,
    pub value: *mut c_void,
}

impl BufferDesc {
    pub fn empty() -> Self {
        Self {
            length: 0,
            value: std::ptr::null_mut(),
        }
    }
    /// A buffer that borrows `bytes` (GSSAPI only reads input buffers).
    pub fn borrowed(bytes: &[u8]) -> Self {
        Self {
            length: bytes.len(),
            value: bytes.as_ptr() as *mut c_void,
        }
    }
    /// # Safety
    /// `self` must be a buffer GSSAPI filled in (or empty).
    pub unsafe fn to_vec(&self) -> Vec<u8> {
        if self.value.is_null() || self.length == 0 {
            return Vec::new();
        }
        std::slice::from_raw_parts(self.value as *const u8, self.length).to_vec()
    }
}

#[repr(C)]
pub struct OidSetDesc {
    pub count: usize,
    pub elements: *mut OidDesc,
}

#[repr(C)]
pub struct KeyValueElement {
    pub key: *const c_char,
    pub value: *const c_char,
}

#[repr(C)]
pub struct KeyValueSet {
    pub count: OmUint32,
    pub elements: *const KeyValueElement,
}

/// `GSS_C_INITIATE`: credentials for starting contexts (a client's).
pub const C_INITIATE: c_int = 1;
/// `GSS_C_GSS_CODE` / `GSS_C_MECH_CODE` for `gss_display_status`.
pub const C_GSS_CODE: c_int = 1;
pub const C_MECH_CODE: c_int = 2;
/// The routine error `GSS_S_CREDENTIALS_EXPIRED`, shifted into place.
pub const S_CREDENTIALS_EXPIRED: OmUint32 = 11 << 16;
/// Calling and routine error bits; a status with none of them set is not an error.
pub const ERROR_MASK: OmUint32 = 0xffff_0000;
/// `GSS_C_INDEFINITE`.
pub const C_INDEFINITE: OmUint32 = 0xffff_ffff;

/// The Kerberos 5 mechanism, 1.2.840.113554.1.2.2.
pub static KRB5_MECH: [u8; 9] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02];
/// `GSS_C_NT_HOSTBASED_SERVICE`, 1.2.840.113554.1.2.1.4: names like `HTTP@rm`.
pub static NT_HOSTBASED_SERVICE: [u8; 10] =
    [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x01, 0x04];
/// `GSS_KRB5_NT_PRINCIPAL_NAME`, 1.2.840.113554.1.2.2.1: names like `alice@YARN.TEST`.
pub static NT_KRB5_PRINCIPAL: [u8; 10] =
    [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02, 0x01];

pub fn oid(bytes: &'static [u8]) -> OidDesc {
    OidDesc {
        length: bytes.len() as OmUint32,
        elements: bytes.as_ptr() as *const c_void,
    }
}

/// The library's soname: MIT Kerberos, as Debian, Red Hat and Alpine ship it.
pub const LIBRARY: &str = "libgssapi_krb5.so.2";

type ImportName =
    unsafe extern "C" fn(*mut OmUint32, *mut BufferDesc, *mut OidDesc, *mut GssName) -> OmUint32;
type ReleaseName = unsafe extern "C" fn(*mut OmUint32, *mut GssName) -> OmUint32;
type DisplayName =
    unsafe extern "C" fn(*mut OmUint32, GssName, *mut BufferDesc, *mut *mut OidDesc) -> OmUint32;
type AcquireCred = unsafe extern "C" fn(
    *mut OmUint32,
    GssName,
    OmUint32,
    *mut OidSetDesc,
    c_int,
    *mut GssCred,
    *mut *mut OidSetDesc,
    *mut OmUint32,
) -> OmUint32;
type AcquireCredFrom = unsafe extern "C" fn(
    *mut OmUint32,
    GssName,
    OmUint32,
    *mut OidSetDesc,
    c_int,
    *const KeyValueSet,
    *mut GssCred,
    *mut *mut OidSetDesc,
    *mut OmUint32,
) -> OmUint32;
type InquireCred = unsafe extern "C" fn(
    *mut OmUint32,
    GssCred,
    *mut GssName,
    *mut OmUint32,
    *mut c_int,
    *mut *mut OidSetDesc,
) -> OmUint32;
type ReleaseCred = unsafe extern "C" fn(*mut OmUint32, *mut GssCred) -> OmUint32;
type InitSecContext = unsafe extern "C" fn(
    *mut OmUint32,
    GssCred,
    *mut GssCtx,
    GssName,
    *mut OidDesc,
    OmUint32,
    OmUint32,
    *mut c_void,
    *mut BufferDesc,
    *mut *mut OidDesc,
    *mut BufferDesc,
    *mut OmUint32,
    *mut OmUint32,
) -> OmUint32;
type DeleteSecContext =
    unsafe extern "C" fn(*mut OmUint32, *mut GssCtx, *mut BufferDesc) -> OmUint32;
type ReleaseBuffer = unsafe extern "C" fn(*mut OmUint32, *mut BufferDesc) -> OmUint32;
type DisplayStatus = unsafe extern "C" fn(
    *mut OmUint32,
    OmUint32,
    c_int,
    *mut OidDesc,
    *mut OmUint32,
    *mut BufferDesc,
) -> OmUint32;

/// The resolved entry points. The library handle is never closed: the functions must stay
/// valid for the life of the process.
pub struct Gss {
    pub import_name: ImportName,
    pub release_name: ReleaseName,
    pub display_name: DisplayName,
    pub acquire_cred: AcquireCred,
    pub acquire_cred_from: AcquireCredFrom,
    pub inquire_cred: InquireCred,
    pub release_cred: ReleaseCred,
    pub init_sec_context: InitSecContext,
    pub delete_sec_context: DeleteSecContext,
    pub release_buffer: ReleaseBuffer,
    pub display_status: DisplayStatus,
}

fn dlerror() -> String {
    // SAFETY: dlerror returns a thread-local C string or null.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown dlopen error".into()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

fn load() -> Result<Gss, String> {
    let name = std::ffi::CString::new(LIBRARY).expect("no NUL in the soname");
    // SAFETY: dlopen with a valid C string; RTLD_NOW resolves everything up front.
    let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(dlerror());
    }
    macro_rules! sym {
        ($name:literal, $ty:ty) => {{
            let s = concat!($name, "\0");
            // SAFETY: a NUL-terminated symbol name; the pointer is checked for null, and the
            // signature is RFC 2744's for this symbol.
            let p = unsafe { libc::dlsym(handle, s.as_ptr() as *const c_char) };
            if p.is_null() {
                return Err(format!("{} has no symbol {}", LIBRARY, $name));
            }
            unsafe { std::mem::transmute::<*mut c_void, $ty>(p) }
        }};
    }
    Ok(Gss {
        import_name: sym!("gss_import_name", ImportName),
        release_name: sym!("gss_release_name", ReleaseName),
        display_name: sym!("gss_display_name", DisplayName),
        acquire_cred: sym!("gss_acquire_cred", AcquireCred),
        acquire_cred_from: sym!("gss_acquire_cred_from", AcquireCredFrom),
        inquire_cred: sym!("gss_inquire_cred", InquireCred),
        release_cred: sym!("gss_release_cred", ReleaseCred),
        init_sec_context: sym!("gss_init_sec_context", InitSecContext),
        delete_sec_context: sym!("gss_delete_sec_context", DeleteSecContext),
        release_buffer: sym!("gss_release_buffer", ReleaseBuffer),
        display_status: sym!("gss_display_status", DisplayStatus),
    })
}

/// The library, loaded on first use (once per process, success or failure).
pub fn library() -> Result<&'static Gss, String> {
    static GSS: OnceLock<Result<Gss, String>> = OnceLock::new();
    GSS.get_or_init(load).as_ref().map_err(Clone::clone)
}

impl Gss {
    /// The text of a status code: the GSSAPI part, then the mechanism's (Kerberos') own
    /// message, which says what actually went wrong ("No Kerberos credentials available").
    pub fn status_text(&self, major: OmUint32, minor: OmUint32) -> String {
        let mut parts = Vec::new();
        for (code, kind) in [(major, C_GSS_CODE), (minor, C_MECH_CODE)] {
            if code == 0 {
                continue;
            }
            let mut context: OmUint32 = 0;
            // Each status may have several messages; a bound keeps a broken library finite.
            for _ in 0..8 {
                let mut min: OmUint32 = 0;
                let mut buf = BufferDesc::empty();
                let mut mech = oid(&KRB5_MECH);
                // SAFETY: valid out pointers; buf is released below.
                let r = unsafe {
                    (self.display_status)(&mut min, code, kind, &mut mech, &mut context, &mut buf)
                };
                if r & ERROR_MASK != 0 {
                    break;
                }
                // SAFETY: filled by the library.
                let text = unsafe { buf.to_vec() };
                unsafe { (self.release_buffer)(&mut min, &mut buf) };
                let text = String::from_utf8_lossy(&text).trim().to_string();
                if !text.is_empty() && !parts.contains(&text) {
                    parts.push(text);
                }
                if context == 0 {
                    break;
                }
            }
        }
        if parts.is_empty() {
            format!("major status {major:#x}, minor status {minor}")
        } else {
            parts.join(": ")
        }
    }
}
