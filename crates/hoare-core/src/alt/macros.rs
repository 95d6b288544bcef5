//! The `alt!`, `pri_alt!` and `fair_alt!` macros (grammar in [`crate::alt`]).

/// Alternation over a fixed set of guards, **pri** policy: of the guards that are
/// ready, the first in the order written is chosen. The chosen arm's body runs
/// inline in the caller, so `break`, `continue`, `return` and `?` work in it.
///
/// ```text
/// alt! {
///     recv(rx) -> v => body,               // v: Result<T, RecvError>
///     recv(rx) if cond -> v => body,       // with a precondition
///     recv(rx) => body,                    // value dropped
///     recv_with(rx, f) -> r => body,       // extended: r = Ok(f(value)), run with the writer held
///     send(tx, value) -> r => body,        // r: Result<(), SendError<T>>; unsent: dropped
///     send_from(tx, &mut slot) -> r => body, // slot: Option<T>; unsent: back in the slot
///     after(timer) => body,                // any Timer: Duration, Instant, Egg, Date, &mut Repeat
///     skip => body,                        // only if no other guard is ready
///     barrier(&mut end) => body,           // an AltingBarrierEnd
/// }
/// ```
/// See [the module documentation](mod@crate::alt) for the details.
///
/// ```
/// use hoare_core::alt;
/// use hoare_core::chan::{Channel, RecvError};
/// use std::time::Duration;
///
/// let (tx, rx) = Channel::builder().bounded(1).one2one::<u32>();
/// tx.send(5).unwrap();
/// let got = alt! {
///     recv(rx) -> v => v,
///     after(Duration::from_millis(10)) => Err(RecvError::Poisoned),
/// };
/// assert_eq!(got, Ok(5));
/// let timed_out = alt! {
///     recv(rx) -> _v => false,
///     after(Duration::from_millis(1)) => true,
/// };
/// assert!(timed_out);
/// ```
#[macro_export]
macro_rules! alt {
    ($($arms:tt)*) => {
        $crate::__alt_parse!(@parse (pri) ()
            (_0 _1 _2 _3 _4 _5 _6 _7 _8 _9 _10 _11 _12 _13 _14 _15
             _16 _17 _18 _19 _20 _21 _22 _23 _24 _25 _26 _27 _28 _29 _30 _31)
            $($arms)*)
    };
}

/// The same as [`alt!`]: alternation with the **pri** policy.
#[macro_export]
macro_rules! pri_alt {
    ($($arms:tt)*) => {
        $crate::alt!($($arms)*)
    };
}

/// Alternation with the **fair** policy: `fair_alt! { state; arms… }`, where
/// `state` is a place of type [`Fair`](crate::alt::Fair) (or `&mut Fair`) that the
/// caller keeps across the alts of one loop. Each alt starts with the guard after
/// the one chosen last time, so no ready guard starves. Arms as in [`alt!`].
///
/// ```
/// use hoare_core::{alt::Fair, chan::Channel, fair_alt};
///
/// let (tx, rx) = Channel::builder().unbounded().one2one::<u8>();
/// tx.send(1).unwrap();
/// let mut fair = Fair::new();
/// let got = fair_alt! { fair;
///     recv(rx) -> v => v.ok(),
///     skip => None,
/// };
/// assert_eq!(got, Some(1));
/// ```
#[macro_export]
macro_rules! fair_alt {
    ($fair:expr; $($arms:tt)*) => {
        $crate::__alt_parse!(@parse (fair $fair) ()
            (_0 _1 _2 _3 _4 _5 _6 _7 _8 _9 _10 _11 _12 _13 _14 _15
             _16 _17 _18 _19 _20 _21 _22 _23 _24 _25 _26 _27 _28 _29 _30 _31)
            $($arms)*)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __alt_parse {
    // All arms parsed.
    (@parse $mode:tt ($($arms:tt)+) $ids:tt) => {
        $crate::__alt_expand!($mode $($arms)+)
    };
    (@parse $mode:tt () $ids:tt) => {
        ::core::compile_error!("alt!: no guards")
    };
    // Separators between arms.
    (@parse $mode:tt $arms:tt $ids:tt , $($rest:tt)*) => {
        $crate::__alt_parse!(@parse $mode $arms $ids $($rest)*)
    };
    (@parse $mode:tt $arms:tt () $($rest:tt)+) => {
        ::core::compile_error!("alt!: too many guards (at most 32; use the Alt builder)")
    };
    // Guard heads.
    (@parse $mode:tt $arms:tt ($id:ident $($ids:ident)*) recv ($rx:expr $(,)?) $($rest:tt)*) => {
        $crate::__alt_parse!(@cond $mode $arms ($($ids)*) (recv $id ($rx)) $($rest)*)
    };
    (@parse $mode:tt $arms:tt ($id:ident $($ids:ident)*) recv_with ($rx:expr, $f:expr $(,)?) $($rest:tt)*) => {
        $crate::__alt_parse!(@cond $mode $arms ($($ids)*) (recv_with $id ($rx, $f)) $($rest)*)
    };
    (@parse $mode:tt $arms:tt ($id:ident $($ids:ident)*) send_from ($tx:expr, $slot:expr $(,)?) $($rest:tt)*) => {
        $crate::__alt_parse!(@cond $mode $arms ($($ids)*) (send_from $id ($tx, $slot)) $($rest)*)
    };
    (@parse $mode:tt $arms:tt ($id:ident $($ids:ident)*) send ($tx:expr, $v:expr $(,)?) $($rest:tt)*) => {
        $crate::__alt_parse!(@cond $mode $arms ($($ids)*) (send $id ($tx, $v)) $($rest)*)
    };
    (@parse $mode:tt $arms:tt ($id:ident $($ids:ident)*) after ($t:expr $(,)?) $($rest:tt)*) => {
        $crate::__alt_parse!(@cond $mode $arms ($($ids)*) (after $id ($t)) $($rest)*)
    };
    (@parse $mode:tt $arms:tt ($id:ident $($ids:ident)*) barrier ($b:expr $(,)?) $($rest:tt)*) => {
        $crate::__alt_parse!(@cond $mode $arms ($($ids)*) (barrier $id ($b)) $($rest)*)
    };
    (@parse $mode:tt $arms:tt ($id:ident $($ids:ident)*) skip $($rest:tt)*) => {
        $crate::__alt_parse!(@cond $mode $arms ($($ids)*) (skip $id ()) $($rest)*)
    };
    (@parse $mode:tt $arms:tt $ids:tt $($rest:tt)+) => {
        ::core::compile_error!(::core::concat!(
            "alt!: expected a guard: `recv(rx)`, `recv_with(rx, f)`, `send(tx, value)`, `send_from(tx, slot)`, `after(timer)`, `barrier(end)` or `skip`, found `",
            ::core::stringify!($($rest)+), "`"
        ))
    };
    // Optional precondition: `if cond`, up to `->` or `=>`.
    (@cond $mode:tt $arms:tt $ids:tt $head:tt if $($rest:tt)*) => {
        $crate::__alt_parse!(@condc $mode $arms $ids $head () $($rest)*)
    };
    (@cond $mode:tt $arms:tt $ids:tt $head:tt $($rest:tt)*) => {
        $crate::__alt_parse!(@arrow $mode $arms $ids $head (true) $($rest)*)
    };
    (@condc $mode:tt $arms:tt $ids:tt $head:tt ($($c:tt)+) -> $($rest:tt)*) => {
        $crate::__alt_parse!(@arrow $mode $arms $ids $head ($($c)+) -> $($rest)*)
    };
    (@condc $mode:tt $arms:tt $ids:tt $head:tt ($($c:tt)+) => $($rest:tt)*) => {
        $crate::__alt_parse!(@arrow $mode $arms $ids $head ($($c)+) => $($rest)*)
    };
    (@condc $mode:tt $arms:tt $ids:tt $head:tt ($($c:tt)*) $t:tt $($rest:tt)*) => {
        $crate::__alt_parse!(@condc $mode $arms $ids $head ($($c)* $t) $($rest)*)
    };
    (@condc $mode:tt $arms:tt $ids:tt $head:tt ($($c:tt)*)) => {
        ::core::compile_error!("alt!: a precondition must be followed by `->` or `=>`")
    };
    // Optional `-> pattern`.
    (@arrow $mode:tt $arms:tt $ids:tt $head:tt $cond:tt -> $p:pat => $($rest:tt)*) => {
        $crate::__alt_parse!(@body $mode $arms $ids $head $cond ($p) $($rest)*)
    };
    (@arrow $mode:tt $arms:tt $ids:tt $head:tt $cond:tt => $($rest:tt)*) => {
        $crate::__alt_parse!(@body $mode $arms $ids $head $cond (_) $($rest)*)
    };
    (@arrow $mode:tt $arms:tt $ids:tt $head:tt $cond:tt $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "alt!: expected `-> pattern =>` or `=>` after a guard, found `",
            ::core::stringify!($($rest)*), "`"
        ))
    };
    // The arm's body: a block (comma optional) or an expression (comma required
    // unless it is the last arm).
    (@body $mode:tt ($($arms:tt)*) $ids:tt $head:tt $cond:tt $p:tt $b:block , $($rest:tt)*) => {
        $crate::__alt_parse!(@parse $mode ($($arms)* [$head $cond $p $b]) $ids $($rest)*)
    };
    (@body $mode:tt ($($arms:tt)*) $ids:tt $head:tt $cond:tt $p:tt $b:block $($rest:tt)*) => {
        $crate::__alt_parse!(@parse $mode ($($arms)* [$head $cond $p $b]) $ids $($rest)*)
    };
    (@body $mode:tt ($($arms:tt)*) $ids:tt $head:tt $cond:tt $p:tt $b:expr , $($rest:tt)*) => {
        $crate::__alt_parse!(@parse $mode ($($arms)* [$head $cond $p $b]) $ids $($rest)*)
    };
    (@body $mode:tt ($($arms:tt)*) $ids:tt $head:tt $cond:tt $p:tt $b:expr) => {
        $crate::__alt_parse!(@parse $mode ($($arms)* [$head $cond $p $b]) $ids)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __alt_expand {
    ($mode:tt $([($kind:ident $id:ident $args:tt) $cond:tt ($p:pat) $b:tt])+) => {{
        $( let mut $id = $crate::__alt_case!($kind $args $cond); )+
        let _ = $crate::__alt_select!($mode [$( &mut $id as &mut dyn $crate::alt::Case ),+]);
        $( let $id = $id.into_chosen(); )+
        $(
            if let ::core::option::Option::Some(__alt_value) = $id {
                match __alt_value {
                    $p => $b,
                }
            } else
        )+
        {
            ::core::unreachable!("hoare: an alt chose no guard")
        }
    }};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __alt_case {
    (recv ($rx:expr) $cond:tt) => {
        $rx.__alt_recv_case($crate::alt::__enabled $cond)
    };
    (recv_with ($rx:expr, $f:expr) $cond:tt) => {
        $rx.__alt_recv_with_case($crate::alt::__enabled $cond, $f)
    };
    (send ($tx:expr, $v:expr) $cond:tt) => {
        $tx.__alt_send_case(if $crate::alt::__enabled $cond {
            ::core::option::Option::Some($v)
        } else {
            ::core::option::Option::None
        })
    };
    (send_from ($tx:expr, $slot:expr) $cond:tt) => {
        $crate::alt::SendFromCase::new($slot, $crate::alt::__enabled $cond, |__alt_v| {
            $tx.__alt_send_case(__alt_v)
        })
    };
    (after ($t:expr) $cond:tt) => {
        $crate::alt::TimeoutCase::new(if $crate::alt::__enabled $cond {
            ::core::option::Option::Some($t)
        } else {
            ::core::option::Option::None
        })
    };
    (barrier ($b:expr) $cond:tt) => {
        $crate::alt::BarrierCase::new(if $crate::alt::__enabled $cond {
            ::core::option::Option::Some($b)
        } else {
            ::core::option::Option::None
        })
    };
    (skip () $cond:tt) => {
        $crate::alt::SkipCase::new($crate::alt::__enabled $cond)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __alt_select {
    ((pri) [$($c:expr),+]) => {
        $crate::alt::__select(&mut [$($c),+], 0)
    };
    ((fair $f:expr) [$($c:expr),+]) => {
        $f.__select(&mut [$($c),+])
    };
}
