//! Declarative message codecs: a struct of a message is declared once, each field with the
//! versions that carry it, and its encoder, decoder and smallest encoding follow from that
//! declaration, the way Kafka's JSON schemas describe a message.
//!
//! [`wire_struct!`] declares a struct; [`wire_message!`] makes a request and its response the
//! two [`Message`]s of one API. A field's type says how it is written (through [`Wire`]:
//! `int32`, `string`, a nullable string, an array of structs, ...) and its [`Presence`] where:
//! in which versions, whether a non-default value may be dropped from a version that lacks it
//! (Kafka's `ignorable`), from which version it may be null, and whether it is a tagged field.
//!
//! ```ignore
//! wire_struct! {
//!     /// One partition of an OffsetCommit request.
//!     pub struct OffsetCommitRequestPartition in "OffsetCommitRequest.partitions" {
//!         /// The partition index.
//!         pub partition_index: i32,
//!         /// The leader epoch (v6+, ignorable), or -1.
//!         pub committed_leader_epoch: i32 = -1 => since(6).ignorable(),
//!     }
//! }
//! ```
//!
//! The declared struct gets a last field `unknown_tagged_fields` (the tagged fields of
//! flexible versions that this crate doesn't know, kept so that re-encoding reproduces
//! them) and a `Default` with each field's default (the field's `= value`, else its type's).
//!
//! # References
//! <https://kafka.apache.org/protocol#protocol_messages>; Kafka's `clients/src/main/resources/
//! common/message/README.md` (versions, `nullableVersions`, `taggedVersions`, `ignorable`).

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::{Error, Result};
#[cfg(doc)]
use crate::messages::Message;
use crate::primitives::{
    get_array_len, get_bool, get_bytes, get_i16, get_i32, get_i64, get_i8, get_nullable_bytes,
    get_nullable_string, get_string, get_tagged_fields, get_uuid, min_array, min_string, put_array,
    put_bool, put_bytes, put_nullable_array, put_nullable_bytes, put_nullable_string, put_string,
    put_uuid, require_default, UnknownTaggedFields, Uuid,
};

/// What the encoding of a value depends on: the version, whether it is flexible (compact
/// lengths and tagged fields), and whether the field being written may be null there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cx {
    /// The message version.
    pub(crate) version: i16,
    /// Whether `version` is flexible.
    pub(crate) flexible: bool,
    /// Whether the field at hand may be null in `version`.
    null_ok: bool,
}

impl Cx {
    /// The context of a message at `version`, flexible or not.
    pub(crate) const fn new(version: i16, flexible: bool) -> Cx {
        Cx {
            version,
            flexible,
            null_ok: true,
        }
    }
}

/// Where a field is on the wire. Five bytes (versions and tags are small), so a struct's
/// field table stays small.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Presence {
    /// The first version with the field.
    min: u8,
    /// The last version with the field ([`NO_MAX`]: every later version).
    max: u8,
    /// Whether a non-default value is silently dropped from versions without the field
    /// (otherwise encoding it there fails with [`Error::FieldNotInVersion`]).
    ignorable: bool,
    /// The first version in which the field may be null.
    nullable_from: u8,
    /// The tag, for a tagged field; [`NO_TAG`] for a field of the body.
    tag: u8,
}

/// [`Presence::max`] of a field in every version from its first on.
const NO_MAX: u8 = u8::MAX;
/// [`Presence::tag`] of a field that is not tagged.
const NO_TAG: u8 = u8::MAX;

/// A version as a [`Presence`] holds it (the declarations are checked at compile time).
const fn small(v: i16) -> u8 {
    assert!(
        v >= 0 && v < NO_MAX as i16,
        "version out of the declarable range"
    );
    v as u8
}

/// In every version.
pub(crate) const ALWAYS: Presence = Presence {
    min: 0,
    max: NO_MAX,
    ignorable: false,
    nullable_from: 0,
    tag: NO_TAG,
};

/// From version `min` on.
pub(crate) const fn since(min: i16) -> Presence {
    Presence {
        min: small(min),
        ..ALWAYS
    }
}

/// Up to version `max`.
pub(crate) const fn until(max: i16) -> Presence {
    Presence {
        max: small(max),
        ..ALWAYS
    }
}

/// From version `min` to version `max`.
pub(crate) const fn between(min: i16, max: i16) -> Presence {
    Presence {
        min: small(min),
        max: small(max),
        ..ALWAYS
    }
}

impl Presence {
    /// The field is ignorable: a non-default value is dropped from versions without it.
    pub(crate) const fn ignorable(self) -> Presence {
        Presence {
            ignorable: true,
            ..self
        }
    }

    /// The field may be null only from version `v` on (an `Option` field is nullable in
    /// all its versions otherwise).
    pub(crate) const fn nullable_from(self, v: i16) -> Presence {
        Presence {
            nullable_from: small(v),
            ..self
        }
    }

    /// The field is tagged, with `tag`, in its versions.
    pub(crate) const fn tagged(self, tag: u32) -> Presence {
        assert!(tag < NO_TAG as u32, "tag out of the declarable range");
        Presence {
            tag: tag as u8,
            ..self
        }
    }

    /// The field's tag, if it is tagged.
    const fn tag(self) -> Option<u32> {
        if self.tag == NO_TAG {
            None
        } else {
            Some(self.tag as u32)
        }
    }

    /// Whether `version` carries the field.
    const fn contains(self, version: i16) -> bool {
        self.min as i16 <= version && (self.max == NO_MAX || version <= self.max as i16)
    }

    /// Whether the field is in the body (not tagged) of `version`.
    pub(crate) const fn in_body(self, version: i16) -> bool {
        self.tag == NO_TAG && self.contains(version)
    }

    /// The context for the field's value.
    pub(crate) const fn cx(self, cx: Cx) -> Cx {
        Cx {
            null_ok: cx.version >= self.nullable_from as i16,
            ..cx
        }
    }
}

/// A value with a wire encoding.
pub(crate) trait Wire: Sized + Default {
    /// The smallest encoding, to bound what an array's count may claim.
    fn min_size(cx: Cx) -> usize;
    /// Writes the value.
    fn put(&self, buf: &mut BytesMut, cx: Cx, what: &'static str) -> Result<()>;
    /// Reads a value.
    fn get(buf: &mut Bytes, cx: Cx, what: &'static str) -> Result<Self>;
    /// Reads a value into `self`, which holds its type's default (a field of a struct being
    /// decoded, see [`get_fields`]).
    fn get_in_place(&mut self, buf: &mut Bytes, cx: Cx, what: &'static str) -> Result<()> {
        *self = Self::get(buf, cx, what)?;
        Ok(())
    }
}

/// A newtype over the wire's `int8` declared with [`int8_newtype!`]: written as its `int8`.
pub(crate) trait Int8Newtype: Copy + Default {
    /// The value of the wire's `int8`.
    fn from_i8(value: i8) -> Self;
    /// The `int8` to write.
    fn to_i8(self) -> i8;
}

impl<T: Int8Newtype> Wire for T {
    #[inline]
    fn min_size(_: Cx) -> usize {
        1
    }
    #[inline]
    fn put(&self, buf: &mut BytesMut, _: Cx, _: &'static str) -> Result<()> {
        buf.put_i8(self.to_i8());
        Ok(())
    }
    #[inline]
    fn get(buf: &mut Bytes, _: Cx, what: &'static str) -> Result<Self> {
        get_i8(buf, what).map(T::from_i8)
    }
}

/// The fixed-size integers.
macro_rules! fixed_wire {
    ($($ty:ty: $put:ident, $get:ident;)*) => {$(
        impl Wire for $ty {
            #[inline]
            fn min_size(_: Cx) -> usize {
                core::mem::size_of::<$ty>()
            }
            #[inline]
            fn put(&self, buf: &mut BytesMut, _: Cx, _: &'static str) -> Result<()> {
                buf.$put(*self);
                Ok(())
            }
            #[inline]
            fn get(buf: &mut Bytes, _: Cx, what: &'static str) -> Result<Self> {
                $get(buf, what)
            }
        }
    )*};
}

fixed_wire! {
    i8: put_i8, get_i8;
    i16: put_i16, get_i16;
    i32: put_i32, get_i32;
    i64: put_i64, get_i64;
}

impl Wire for bool {
    fn min_size(_: Cx) -> usize {
        1
    }
    fn put(&self, buf: &mut BytesMut, _: Cx, _: &'static str) -> Result<()> {
        put_bool(buf, *self);
        Ok(())
    }
    fn get(buf: &mut Bytes, _: Cx, what: &'static str) -> Result<Self> {
        get_bool(buf, what)
    }
}

impl Wire for Uuid {
    fn min_size(_: Cx) -> usize {
        16
    }
    fn put(&self, buf: &mut BytesMut, _: Cx, _: &'static str) -> Result<()> {
        put_uuid(buf, self);
        Ok(())
    }
    fn get(buf: &mut Bytes, _: Cx, what: &'static str) -> Result<Self> {
        get_uuid(buf, what)
    }
}

/// Strings and bytes, with their classic or compact length prefix, and their nullable forms
/// as `Option` (`Option<Bytes>` is also Fetch's `records`: zero-copy, a view into the input).
macro_rules! sized_wire {
    ($($ty:ty: $min:ident, $put:ident, $get:ident, $put_nullable:ident, $get_nullable:ident;)*) => {$(
        impl Wire for $ty {
            fn min_size(cx: Cx) -> usize {
                $min(cx.flexible)
            }
            fn put(&self, buf: &mut BytesMut, cx: Cx, what: &'static str) -> Result<()> {
                $put(buf, self, cx.flexible, what)
            }
            fn get(buf: &mut Bytes, cx: Cx, what: &'static str) -> Result<Self> {
                $get(buf, cx.flexible, what)
            }
        }

        impl Wire for Option<$ty> {
            fn min_size(cx: Cx) -> usize {
                $min(cx.flexible)
            }
            fn put(&self, buf: &mut BytesMut, cx: Cx, what: &'static str) -> Result<()> {
                check_null(self.is_none(), cx, what)?;
                $put_nullable(buf, self.as_deref(), cx.flexible, what)
            }
            fn get(buf: &mut Bytes, cx: Cx, what: &'static str) -> Result<Self> {
                let value = $get_nullable(buf, cx.flexible, what)?;
                check_null(value.is_none(), cx, what)?;
                Ok(value)
            }
        }
    )*};
}

sized_wire! {
    String: min_string, put_string, get_string, put_nullable_string, get_nullable_string;
    Bytes: min_array, put_bytes, get_bytes, put_nullable_bytes, get_nullable_bytes;
}

impl<T: Wire> Wire for Vec<T> {
    fn min_size(cx: Cx) -> usize {
        min_array(cx.flexible)
    }
    fn put(&self, buf: &mut BytesMut, cx: Cx, what: &'static str) -> Result<()> {
        put_array(buf, self, cx.flexible, what, |b, item| {
            item.put(b, cx, what)
        })
    }
    fn get(buf: &mut Bytes, cx: Cx, what: &'static str) -> Result<Self> {
        let mut out = Vec::new();
        out.get_in_place(buf, cx, what)?;
        Ok(out)
    }
    /// Pushes the elements onto `self` (empty, as a field's default is): nothing to drop
    /// first, so no drop of the old vector compiled into every element type's reader.
    fn get_in_place(&mut self, buf: &mut Bytes, cx: Cx, what: &'static str) -> Result<()> {
        debug_assert!(
            self.is_empty(),
            "{what}: a declared array's default is empty"
        );
        match array_count(buf, cx, T::min_size(cx), what, false)? {
            Some(n) => get_elements(self, buf, cx, n, what),
            None => Err(Error::InvalidValue { what, value: -1 }),
        }
    }
}

impl<T: Wire> Wire for Option<Vec<T>> {
    fn min_size(cx: Cx) -> usize {
        min_array(cx.flexible)
    }
    fn put(&self, buf: &mut BytesMut, cx: Cx, what: &'static str) -> Result<()> {
        check_null(self.is_none(), cx, what)?;
        put_nullable_array(buf, self.as_deref(), cx.flexible, what, |b, item| {
            item.put(b, cx, what)
        })
    }
    fn get(buf: &mut Bytes, cx: Cx, what: &'static str) -> Result<Self> {
        match array_count(buf, cx, T::min_size(cx), what, true)? {
            Some(n) => {
                let mut out = Vec::new();
                get_elements(&mut out, buf, cx, n, what)?;
                Ok(Some(out))
            }
            None => Ok(None),
        }
    }
}

/// An array's element count, checked against the bytes left (`min_elem_size` each) and, for
/// a null, against `nullable` and the version: the part of reading an array that doesn't
/// depend on its element type, compiled once.
#[inline(never)]
fn array_count(
    buf: &mut Bytes,
    cx: Cx,
    min_elem_size: usize,
    what: &'static str,
    nullable: bool,
) -> Result<Option<usize>> {
    let count = get_array_len(buf, cx.flexible, min_elem_size, what)?;
    if count.is_none() {
        if !nullable {
            return Err(Error::InvalidValue { what, value: -1 });
        }
        check_null(true, cx, what)?;
    }
    Ok(count)
}

/// Reads `n` elements of an array whose count [`array_count`] has checked onto `out`.
fn get_elements<T: Wire>(
    out: &mut Vec<T>,
    buf: &mut Bytes,
    cx: Cx,
    n: usize,
    what: &'static str,
) -> Result<()> {
    out.reserve_exact(n);
    for _ in 0..n {
        // Each element read in place: a struct's reader then writes into the vector itself.
        out.push(T::default());
        if let Some(last) = out.last_mut() {
            last.get_in_place(buf, cx, what)?;
        }
    }
    Ok(())
}

/// Fails for a null where the version has none (to write, or read from the wire).
fn check_null(is_null: bool, cx: Cx, what: &'static str) -> Result<()> {
    if is_null && !cx.null_ok {
        Err(Error::UnexpectedNull {
            what,
            version: cx.version,
        })
    } else {
        Ok(())
    }
}

/// The smallest encoding of a field of type `T` in the body at `cx`.
#[inline(always)]
pub(crate) fn field_min_size<T: Wire>(p: Presence, cx: Cx) -> usize {
    if p.in_body(cx.version) {
        T::min_size(p.cx(cx))
    } else {
        0
    }
}

/// Writes a field: in the body, or to `tagged` (a tagged field with a non-default value),
/// or not at all, checking that a version without the field may drop its value.
#[inline(always)]
pub(crate) fn put_field<T: Wire>(
    buf: &mut BytesMut,
    tagged: &mut Vec<(u32, BytesMut)>,
    cx: Cx,
    p: Presence,
    value: &T,
    is_default: impl FnOnce() -> bool,
    what: &'static str,
) -> Result<()> {
    if !p.contains(cx.version) {
        if p.ignorable {
            Ok(())
        } else {
            require_default(is_default(), what, cx.version)
        }
    } else if let Some(tag) = p.tag() {
        if !is_default() {
            let mut b = BytesMut::new();
            value.put(&mut b, p.cx(cx), what)?;
            tagged.push((tag, b));
        }
        Ok(())
    } else {
        value.put(buf, p.cx(cx), what)
    }
}

/// Reads a tagged-field section, handing each tag to `known` (one instantiation of the
/// reader for every struct).
pub(crate) fn get_tags(
    buf: &mut Bytes,
    what: &'static str,
    known: &mut dyn FnMut(u32, &mut Bytes) -> Result<bool>,
) -> Result<UnknownTaggedFields> {
    get_tagged_fields(buf, what, known)
}

/// Whether any of `fields` is tagged.
pub(crate) const fn any_tagged(fields: &[Presence]) -> bool {
    let mut i = 0;
    while i < fields.len() {
        if fields[i].tag != NO_TAG {
            return true;
        }
        i += 1;
    }
    false
}

/// One field of a declared struct, as its decoder sees it: where it is on the wire, and where
/// its name in errors (`"Message.path.name"`) ends in the struct's names, which are one string
/// (the table holds no pointer: a pointer in a table costs a relocation in a PIE binary).
#[derive(Clone, Copy)]
pub(crate) struct Field {
    presence: Presence,
    end: u16,
}

/// The field table of a struct from its fields' presences and the lengths of their names.
pub(crate) const fn field_table<const N: usize>(
    presences: [Presence; N],
    name_lens: [usize; N],
) -> [Field; N] {
    let mut out = [Field {
        presence: ALWAYS,
        end: 0,
    }; N];
    let mut end = 0;
    let mut i = 0;
    while i < N {
        end += name_lens[i];
        assert!(end <= u16::MAX as usize, "field names too long");
        out[i] = Field {
            presence: presences[i],
            end: end as u16,
        };
        i += 1;
    }
    out
}

/// A field's value read in place: one implementation per field type, shared by every struct
/// with a field of that type, so a struct's decoder is its table of [`Field`]s and the list
/// of its fields' places, not code of its own.
pub(crate) trait GetInto {
    /// Reads the value into `self`.
    fn get_into(&mut self, buf: &mut Bytes, cx: Cx, what: &'static str) -> Result<()>;
}

impl<T: Wire> GetInto for T {
    fn get_into(&mut self, buf: &mut Bytes, cx: Cx, what: &'static str) -> Result<()> {
        self.get_in_place(buf, cx, what)
    }
}

/// Reads a declared struct's fields into `slots` (its fields in declaration order, holding
/// their defaults), then, in flexible versions, its tagged-field section into `unknown` (the
/// tags it doesn't declare). One copy for every struct.
#[inline(never)]
pub(crate) fn get_fields(
    buf: &mut Bytes,
    cx: Cx,
    path: &'static str,
    names: &'static str,
    fields: &[Field],
    slots: &mut [&mut dyn GetInto],
    unknown: &mut UnknownTaggedFields,
) -> Result<()> {
    let mut start = 0;
    for (field, slot) in fields.iter().zip(slots.iter_mut()) {
        let what = names.get(start..usize::from(field.end)).unwrap_or(path);
        start = usize::from(field.end);
        if field.presence.in_body(cx.version) {
            slot.get_into(buf, field.presence.cx(cx), what)?;
        }
    }
    if cx.flexible {
        *unknown = get_tags(buf, path, &mut |tag: u32, data: &mut Bytes| {
            let mut start = 0;
            for (field, slot) in fields.iter().zip(slots.iter_mut()) {
                let what = names.get(start..usize::from(field.end)).unwrap_or(path);
                start = usize::from(field.end);
                let p = field.presence;
                if p.tag() == Some(tag) && p.contains(cx.version) {
                    slot.get_into(data, p.cx(cx), what)?;
                    return Ok(true);
                }
            }
            Ok(false)
        })?;
    }
    Ok(())
}

/// Declares structs of a message, with their codecs: see the [module docs](self).
///
/// `pub struct Name in "Message.path" { fields }`, one or more, each with `Debug` (the
/// derived form; `in "path", manual_debug` leaves it to the caller), `Clone`, `PartialEq`,
/// `Eq` and `Default` (from the fields' defaults); each field is
/// `pub name: Type [= default] [=> presence]`, the presence built from [`since`],
/// [`until`], [`between`] and [`Presence`]'s methods (every version when left out). The
/// path names the fields in errors (`"Message.path.name"`).
macro_rules! wire_struct {
    ($(
        $(#[$meta:meta])*
        pub struct $name:ident in $path:literal $(, $debug:ident)? {
            $(
                $(#[$fmeta:meta])*
                pub $field:ident : $ty:ty $(= $default:expr)? $(=> $presence:expr)?
            ),* $(,)?
        }
    )+) => {$(
        $crate::messages::codec::wire_struct!(@one
            $(#[$meta])*
            pub struct $name in $path [$($debug)?] {
                $(
                    $(#[$fmeta])*
                    pub $field: $ty $(= $default)? $(=> $presence)?,
                )*
            }
        );
    )+};
    (@one
        $(#[$meta:meta])*
        pub struct $name:ident in $path:literal [$($debug:ident)?] {
            $(
                $(#[$fmeta:meta])*
                pub $field:ident : $ty:ty $(= $default:expr)? $(=> $presence:expr)?,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq)]
        pub struct $name {
            $(
                $(#[$fmeta])*
                pub $field: $ty,
            )*
            /// Tagged fields this crate doesn't know (flexible versions).
            pub unknown_tagged_fields: $crate::primitives::UnknownTaggedFields,
        }

        $crate::messages::codec::wire_struct!(@debug [$($debug)?] $name { $($field)* });

        impl ::core::default::Default for $name {
            fn default() -> Self {
                $name {
                    $($field: $crate::messages::codec::wire_struct!(@default $ty $(, $default)?),)*
                    unknown_tagged_fields: ::core::default::Default::default(),
                }
            }
        }

        impl $crate::messages::codec::Wire for $name {
            fn min_size(cx: $crate::messages::codec::Cx) -> usize {
                let mut size = $crate::primitives::min_tags(cx.flexible);
                $(
                    size += $crate::messages::codec::field_min_size::<$ty>(
                        $crate::messages::codec::wire_struct!(@presence $($presence)?),
                        cx,
                    );
                )*
                size
            }

            fn put(
                &self,
                buf: &mut ::bytes::BytesMut,
                cx: $crate::messages::codec::Cx,
                _: &'static str,
            ) -> $crate::error::Result<()> {
                // The body's fields in order; the tagged ones that hold a value, for the
                // tagged section.
                let mut tagged = ::std::vec::Vec::new();
                $(
                    $crate::messages::codec::put_field(
                        buf,
                        &mut tagged,
                        cx,
                        $crate::messages::codec::wire_struct!(@presence $($presence)?),
                        &self.$field,
                        || {
                            self.$field
                                == $crate::messages::codec::wire_struct!(@default $ty $(, $default)?)
                        },
                        concat!($path, ".", stringify!($field)),
                    )?;
                )*
                if cx.flexible {
                    const TAGGED: bool = $crate::messages::codec::any_tagged(&[$($crate::messages::codec::wire_struct!(@presence $($presence)?)),*]);
                    if TAGGED {
                        $crate::primitives::put_tagged_fields(
                            buf,
                            tagged,
                            &self.unknown_tagged_fields,
                            $path,
                        )?;
                    } else {
                        $crate::primitives::put_unknown_tagged_fields(
                            buf,
                            &self.unknown_tagged_fields,
                        );
                    }
                }
                Ok(())
            }

            fn get(
                buf: &mut ::bytes::Bytes,
                cx: $crate::messages::codec::Cx,
                what: &'static str,
            ) -> $crate::error::Result<Self> {
                let mut out = <$name as ::core::default::Default>::default();
                $crate::messages::codec::Wire::get_in_place(&mut out, buf, cx, what)?;
                Ok(out)
            }

            // Out of line: one copy of each struct's decoder, not one per caller (the
            // smallest probe, measured; encoders are left to the compiler).
            #[inline(never)]
            fn get_in_place(
                &mut self,
                buf: &mut ::bytes::Bytes,
                cx: $crate::messages::codec::Cx,
                _: &'static str,
            ) -> $crate::error::Result<()> {
                // The fields the version has, over the defaults in `self`, read by the one
                // table-driven reader of every declared struct.
                const NAMES: &str = concat!($($path, ".", stringify!($field),)*);
                const FIELDS: &[$crate::messages::codec::Field] =
                    &$crate::messages::codec::field_table(
                        [$($crate::messages::codec::wire_struct!(@presence $($presence)?)),*],
                        [$(concat!($path, ".", stringify!($field)).len()),*],
                    );
                let $name { $($field,)* unknown_tagged_fields } = self;
                $crate::messages::codec::get_fields(
                    buf,
                    cx,
                    $path,
                    NAMES,
                    FIELDS,
                    &mut [$($field as &mut dyn $crate::messages::codec::GetInto),*],
                    unknown_tagged_fields,
                )
            }
        }
    };
    (@debug [] $name:ident { $($field:ident)* }) => {
        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(stringify!($name))
                    $(.field(stringify!($field), &self.$field))*
                    .field("unknown_tagged_fields", &self.unknown_tagged_fields)
                    .finish()
            }
        }
    };
    // The struct writes its own `Debug` (to keep secrets out of it).
    (@debug [manual_debug] $name:ident { $($field:ident)* }) => {};
    (@default $ty:ty) => { <$ty as ::core::default::Default>::default() };
    (@default $ty:ty, $default:expr) => { $default };
    (@presence) => { $crate::messages::codec::ALWAYS };
    // The presence is written with `since`, `until` and the rest unqualified, so its const
    // block brings them into scope.
    (@presence $presence:expr) => {
        const {
            #[allow(unused_imports)]
            use $crate::messages::codec::*;
            $presence
        }
    };
}

/// Declares an open newtype over the wire's `int8` (an enum of Kafka's whose values this crate
/// names, while one it doesn't name still survives decoding): the struct (`Debug`, `Clone`,
/// `Copy`, `PartialEq`, `Eq`, `Hash`, `Default`), its named values as constants, `Display`
/// (the value's name, else `"$unknown <value>"`) and [`Int8Newtype`], which gives it its
/// [`Wire`] encoding as an `int8`. Methods after the values join the type's `impl`, beside the
/// private `known_name`.
///
/// ```ignore
/// int8_newtype! {
///     /// The type's doc.
///     pub struct Name(pub i8), unknown "name" {
///         /// The value's doc.
///         VALUE = 0 => "VALUE",
///     }
/// }
/// ```
macro_rules! int8_newtype {
    (
        $(#[$meta:meta])*
        pub struct $name:ident(pub i8), unknown $unknown:literal {
            $($(#[$const_meta:meta])* $konst:ident = $value:literal => $display:literal,)*
        }
        $($method:item)*
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name(pub i8);

        impl $name {
            $($(#[$const_meta])* pub const $konst: $name = $name($value);)*

            /// The name of a value this crate knows.
            fn known_name(self) -> Option<&'static str> {
                match self {
                    $($name::$konst => Some($display),)*
                    _ => None,
                }
            }

            $($method)*
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match self.known_name() {
                    Some(name) => f.write_str(name),
                    None => write!(f, concat!($unknown, " {}"), self.0),
                }
            }
        }

        impl $crate::messages::codec::Int8Newtype for $name {
            fn from_i8(value: i8) -> Self {
                $name(value)
            }
            fn to_i8(self) -> i8 {
                self.0
            }
        }
    };
}

/// Makes a request and its response, each declared with [`wire_struct!`], the two
/// [`Message`]s of one API, with the API key, the version range and the first flexible version
/// that Kafka's schemas give both, and the request a [`Request`](crate::messages::Request).
///
/// `wire_message!(FooRequest => FooResponse: FOO, versions 1..=3, first flexible 2);`
macro_rules! wire_message {
    (
        $request:ident => $response:ident: $key:ident, versions $min:literal ..= $max:literal,
        first flexible $flexible:expr $(,)?
    ) => {
        $crate::messages::codec::wire_message!(@message $request, $key, $min, $max, $flexible);
        $crate::messages::codec::wire_message!(@message $response, $key, $min, $max, $flexible);

        impl $crate::messages::Request for $request {
            type Response = $response;
        }
    };
    (@message $name:ident, $key:ident, $min:literal, $max:literal, $flexible:expr) => {
        impl $crate::messages::Message for $name {
            const API_KEY: $crate::api_key::ApiKey = $crate::api_key::ApiKey::$key;
            const VERSIONS: $crate::messages::VersionRange =
                $crate::messages::VersionRange { min: $min, max: $max };
            const FIRST_FLEXIBLE_VERSION: i16 = $flexible;
            const NAME: &'static str = stringify!($name);

            fn encode(&self, buf: &mut ::bytes::BytesMut, version: i16) -> $crate::error::Result<()> {
                Self::check_version(version)?;
                let cx = $crate::messages::codec::Cx::new(version, Self::is_flexible(version));
                $crate::messages::codec::Wire::put(self, buf, cx, Self::NAME)
            }

            fn decode(buf: &mut ::bytes::Bytes, version: i16) -> $crate::error::Result<Self> {
                Self::check_version(version)?;
                let cx = $crate::messages::codec::Cx::new(version, Self::is_flexible(version));
                $crate::messages::codec::Wire::get(buf, cx, Self::NAME)
            }
        }
    };
}

/// Declares, with [`wire_struct!`], a topic of a message that names its topics up to a version
/// and gives their ids after it (KIP-516): a name field (`name` or `topic`, as the schema calls
/// it) until `$last`, `topic_id` from the next version on, both ignorable, and the topic's
/// partitions with their doc.
///
/// `pub struct Name in "Message.path" { topic until 12, partitions: Vec<P> = "doc" }`
macro_rules! wire_topic {
    (
        $(#[$meta:meta])*
        pub struct $name:ident in $path:literal {
            $field:ident until $last:literal, $partitions:ident: $ty:ty = $doc:literal $(,)?
        }
    ) => {
        $crate::messages::codec::wire_struct! {
            $(#[$meta])*
            pub struct $name in $path {
                #[doc = concat!("The topic name (until v", stringify!($last), ", ignorable).")]
                pub $field: String => $crate::messages::codec::until($last).ignorable(),
                #[doc = concat!("The topic id (after v", stringify!($last), ", ignorable).")]
                pub topic_id: $crate::primitives::Uuid
                    => $crate::messages::codec::since($last + 1).ignorable(),
                #[doc = $doc]
                pub $partitions: $ty,
            }
        }

        #[cfg(test)]
        impl $crate::messages::testing::ArbTopic for $name {
            type Partitions = $ty;
            const LAST_NAMED: i16 = $last;
            fn from_parts(
                name: String,
                topic_id: $crate::primitives::Uuid,
                partitions: $ty,
                tags: $crate::primitives::UnknownTaggedFields,
            ) -> Self {
                Self { $field: name, topic_id, $partitions: partitions, unknown_tagged_fields: tags }
            }
        }
    };
}

pub(crate) use {int8_newtype, wire_message, wire_struct, wire_topic};

#[cfg(test)]
mod tests {
    use bytes::{BufMut, Bytes, BytesMut};

    use super::{Cx, Wire};
    use crate::error::Error;

    wire_struct! {
        /// A struct of every kind of field the table-driven reader handles.
        #[allow(unreachable_pub)]
        pub struct Probe in "Probe" {
            /// In every version.
            pub first: i32,
            /// Until v1.
            pub old: i16 = -1 => until(1),
            /// From v1.
            pub name: String => since(1),
            /// Tagged from v2.
            pub hint: i64 = -1 => since(2).tagged(3),
            /// Last, in every version.
            pub last: Vec<i32>,
        }
    }

    fn probe_bytes(version: i16) -> Bytes {
        let mut b = BytesMut::new();
        b.put_i32(7);
        if version <= 1 {
            b.put_i16(5);
        }
        if version >= 1 {
            b.put_i16(2);
            b.put_slice(b"ab");
        }
        b.put_i32(1);
        b.put_i32(9);
        b.freeze()
    }

    #[test]
    fn fields_are_read_in_their_versions_and_named_in_errors() {
        for version in [0, 1] {
            let cx = Cx::new(version, false);
            let full = probe_bytes(version);
            let probe = Probe::get(&mut full.clone(), cx, "").unwrap();
            assert_eq!(probe.first, 7);
            assert_eq!(probe.old, if version <= 1 { 5 } else { -1 });
            assert_eq!(probe.name, if version >= 1 { "ab" } else { "" });
            assert_eq!(probe.hint, -1);
            assert_eq!(probe.last, [9]);
            // Cut short in each field in turn: the error names that field.
            let ends: &[(usize, &str)] = if version == 0 {
                &[(2, "Probe.first"), (5, "Probe.old"), (8, "Probe.last")]
            } else {
                &[
                    (2, "Probe.first"),
                    (5, "Probe.old"),
                    (7, "Probe.name"),
                    (13, "Probe.last"),
                ]
            };
            for &(cut, field) in ends {
                match Probe::get(&mut full.slice(..cut), cx, "") {
                    Err(Error::Truncated { what, .. }) | Err(Error::InvalidLength { what, .. }) => {
                        assert_eq!(what, field, "v{version}, cut at {cut}")
                    }
                    other => panic!("v{version}, cut at {cut}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn tagged_fields_are_read_by_tag_and_unknown_tags_kept() {
        let cx = Cx::new(2, true);
        let mut b = BytesMut::new();
        b.put_i32(7);
        b.put_u8(3); // compact string "ab"
        b.put_slice(b"ab");
        b.put_u8(2); // compact array of one
        b.put_i32(9);
        b.put_u8(2); // two tagged fields
        b.put_u8(3); // tag 3: hint
        b.put_u8(8);
        b.put_i64(42);
        b.put_u8(5); // tag 5: unknown
        b.put_u8(1);
        b.put_u8(0xee);
        let probe = Probe::get(&mut b.freeze(), cx, "").unwrap();
        assert_eq!(
            (probe.first, probe.name.as_str(), probe.hint),
            (7, "ab", 42)
        );
        assert_eq!(probe.last, [9]);
        let unknown = &probe.unknown_tagged_fields.0;
        assert_eq!(unknown.len(), 1);
        assert_eq!((unknown[0].tag, &unknown[0].data[..]), (5, &[0xee][..]));

        // Round trip through the encoder.
        let mut out = BytesMut::new();
        probe.put(&mut out, cx, "").unwrap();
        assert_eq!(Probe::get(&mut out.freeze(), cx, "").unwrap(), probe);
    }
}
