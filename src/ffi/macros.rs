//! The element types of C++-held channels, listed once, and the per-type `match`
//! that every end and receive set is dispatched by (static calls, as if written out
//! per type). A macro is visible in the modules declared after this one.

/// Calls `$m!(args; Raw RawItem; <natives>; <by-value classes>)`: every element
/// type of a C++-held channel, by its variant name (of `Elem`, `TxAny`, `RxAny`,
/// `SetAny`) and its Rust type. The one list every per-type match is made from.
macro_rules! elems {
    ($m:ident!($($args:tt)*)) => {
        $m! {
            $($args)*;
            Raw RawItem;
            I64 i64, U64 u64, F64 f64, Str String, Bytes Vec<u8>;
            Pod1 [u64; 1], Pod2 [u64; 2], Pod4 [u64; 4], Pod8 [u64; 8]
        }
    };
}

/// `match $e { $any::V(x) => $body, .. }` over every element type: `$body` is
/// compiled once per type (a match on the type tag, static calls, as if written out).
/// With `Raw => $raw`, the `Raw` arm (C++ values by address) is `$raw` instead.
macro_rules! dispatch {
    ($any:ident($x:ident) in $e:expr => $body:expr) => {
        dispatch!($any($x) in $e => $body, Raw => $body)
    };
    ($any:ident($x:ident) in $e:expr => $body:expr, Raw => $raw:expr) => {
        elems!(dispatch_arms!($any, $x, $e, $body, $raw))
    };
}

macro_rules! dispatch_arms {
    ($any:ident, $x:ident, $e:expr, $body:expr, $raw:expr;
     $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        match $e {
            $any::$rv($x) => $raw,
            $($any::$v($x) => $body,)*
            $($any::$pv($x) => $body,)*
        }
    };
}

/// `match $e { $any::V(_) => $m!(V), .. }`: for code that names the variant.
macro_rules! each_variant {
    ($any:ident, $e:expr, $m:ident; $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        match $e {
            $any::$rv(_) => $m!($rv),
            $($any::$v(_) => $m!($v),)*
            $($any::$pv(_) => $m!($pv),)*
        }
    };
}

/// `enum $any { V($w<T>), .. }` with one variant per element type, and `From` the
/// typed value (an end, a receive set). With `elem`, also `elem()`: the type tag C++
/// checks.
macro_rules! any_enum {
    ($any:ident, $w:ident; $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        any_enum!(@enum $any, $w; $rv $rt, $($v $t,)* $($pv $pt),*);
    };
    ($any:ident, $w:ident, elem; $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        any_enum!(@enum $any, $w; $rv $rt, $($v $t,)* $($pv $pt),*);
        any_enum!(@elem $any; $rv, $($v,)* $($pv),*);
    };
    (@enum $any:ident, $w:ident; $($v:ident $t:ty),*) => {
        pub(super) enum $any {
            $($v($w<$t>),)*
        }
        $(impl From<$w<$t>> for $any {
            fn from(x: $w<$t>) -> Self {
                $any::$v(x)
            }
        })*
    };
    (@elem $any:ident; $($v:ident),*) => {
        impl $any {
            /// The element type tag.
            fn elem(&self) -> Elem {
                match self {
                    $($any::$v(_) => Elem::$v,)*
                }
            }
        }
    };
}
