;; The key sorter behind canonical JSON of objects whose keys are out of order
;; (key-order.ts): takes JSON.stringify's text of a value, as UTF-8, and puts
;; the members of every object in the UTF-16 order of their keys, in place.
;; The text keeps its length: only the order of members changes. Compiled at
;; build time by scripts/build-wasm.js (wabt) into
;; dist/canonical/key-order.generated.js.
;;
;; reorder(n, members, membersEnd, frames, framesEnd, scratch): the text is
;; bytes [0, n) of memory, and bytes [n, n+16) must be readable. The other
;; arguments are the caller's layout of the rest of memory:
;;   [members, membersEnd)  one record of 12 bytes per member of every object
;;                          still open: key start, key end (inside the quotes),
;;                          member end;
;;   [frames, framesEnd)    one frame of 12 bytes per open object or array:
;;                          bracket position, first member record, flags
;;                          (1 an object, 2 out of order);
;;   framesEnd              12 bytes for the record being placed while sorting;
;;   scratch                as many bytes as the text, where an object's
;;                          members but its longest are put in order before
;;                          they are copied back around it.
;; Returns 0 when the text is sorted, or
;;   -1  a key holds an escape (its bytes do not sort as its characters): the
;;       caller sorts some other way;
;;   -2  more open members or deeper nesting than the caller made room for;
;;   -3  not the text JSON.stringify writes (a backslash outside a string, a
;;       bracket not closed).
;; The text is JSON.stringify's: no white space, and every string in its
;; spelling, so only quotes, backslashes and the six structural characters
;; { } [ ] , need be looked at, sixteen bytes at a time.
(module
  (memory (export "memory") 1)

  ;; Whether the key of the record at $a sorts before the key of the record at
  ;; $b in UTF-16 code-unit order. Neither key holds an escape, so their bytes
  ;; are their characters in UTF-8, whose byte order is code-point order. The
  ;; two orders differ only between a character beyond U+FFFF (a lead byte F0
  ;; to F4; in UTF-16 a surrogate, D800 to DFFF) and one from U+E000 to U+FFFF
  ;; (lead byte EE or EF): where the first differing bytes are such a pair,
  ;; the answer is turned round. (Before the first difference the bytes are
  ;; the same, so both keys are at the same place in the same kind of character.)
  (func $less (param $a i32) (param $b i32) (result i32)
    (local $p i32) (local $q i32) (local $la i32) (local $lb i32) (local $m i32)
    (local $i i32) (local $x i32) (local $y i32) (local $r i32)
    (local.set $p (i32.load (local.get $a)))
    (local.set $q (i32.load (local.get $b)))
    (local.set $la (i32.sub (i32.load offset=4 (local.get $a)) (local.get $p)))
    (local.set $lb (i32.sub (i32.load offset=4 (local.get $b)) (local.get $q)))
    (local.set $m (select (local.get $la) (local.get $lb) (i32.lt_u (local.get $la) (local.get $lb))))
    (block $same
      (loop $bytes
        (br_if $same (i32.ge_u (local.get $i) (local.get $m)))
        (local.set $x (i32.load8_u (i32.add (local.get $p) (local.get $i))))
        (local.set $y (i32.load8_u (i32.add (local.get $q) (local.get $i))))
        (if (i32.ne (local.get $x) (local.get $y))
          (then
            (local.set $r (i32.lt_u (local.get $x) (local.get $y)))
            (if (i32.and
                  (i32.and (i32.ge_u (local.get $x) (i32.const 0xee)) (i32.ge_u (local.get $y) (i32.const 0xee)))
                  (i32.ne (i32.ge_u (local.get $x) (i32.const 0xf0)) (i32.ge_u (local.get $y) (i32.const 0xf0))))
              (then (local.set $r (i32.eqz (local.get $r)))))
            (return (local.get $r))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $bytes)))
    ;; one key is the start of the other: the shorter first
    (i32.lt_u (local.get $la) (local.get $lb)))

  ;; Sorts the member records [$base, $top) by key (Shell's sort, Knuth's gaps:
  ;; in place, no recursion, and fast enough for objects of many keys), then
  ;; puts the members in that order, comma between, over the object's inside,
  ;; which begins after the brace at $open: all but the longest through
  ;; scratch, the longest moved straight to its place.
  (func $sortMembers (param $open i32) (param $base i32) (param $top i32) (param $tmp i32) (param $scratch i32)
    (local $k i32) (local $gap i32) (local $i i32) (local $j i32) (local $from i32) (local $at i32)
    (local $r i32) (local $out i32) (local $start i32) (local $len i32)
    (local $big i32) (local $bigLen i32) (local $split i32)
    (local.set $k (i32.div_u (i32.sub (local.get $top) (local.get $base)) (i32.const 12)))
    (local.set $gap (i32.const 1))
    (block $grown
      (loop $grow
        (br_if $grown (i32.ge_u (local.get $gap) (i32.div_u (local.get $k) (i32.const 3))))
        (local.set $gap (i32.add (i32.mul (local.get $gap) (i32.const 3)) (i32.const 1)))
        (br $grow)))
    (block $sorted
      (loop $gaps
        (br_if $sorted (i32.eqz (local.get $gap)))
        (local.set $i (local.get $gap))
        (block $passed
          (loop $pass
            (br_if $passed (i32.ge_u (local.get $i) (local.get $k)))
            ;; tmp = record i
            (local.set $from (i32.add (local.get $base) (i32.mul (local.get $i) (i32.const 12))))
            (i64.store (local.get $tmp) (i64.load (local.get $from)))
            (i32.store offset=8 (local.get $tmp) (i32.load offset=8 (local.get $from)))
            (local.set $j (local.get $i))
            (block $placed
              (loop $shift
                (br_if $placed (i32.lt_u (local.get $j) (local.get $gap)))
                (local.set $at (i32.add (local.get $base) (i32.mul (i32.sub (local.get $j) (local.get $gap)) (i32.const 12))))
                (br_if $placed (i32.eqz (call $less (local.get $tmp) (local.get $at))))
                (local.set $from (i32.add (local.get $base) (i32.mul (local.get $j) (i32.const 12))))
                (i64.store (local.get $from) (i64.load (local.get $at)))
                (i32.store offset=8 (local.get $from) (i32.load offset=8 (local.get $at)))
                (local.set $j (i32.sub (local.get $j) (local.get $gap)))
                (br $shift)))
            (local.set $from (i32.add (local.get $base) (i32.mul (local.get $j) (i32.const 12))))
            (i64.store (local.get $from) (i64.load (local.get $tmp)))
            (i32.store offset=8 (local.get $from) (i32.load offset=8 (local.get $tmp)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $pass)))
        (local.set $gap (i32.div_u (local.get $gap) (i32.const 3)))
        (br $gaps)))
    ;; the longest member is moved once, where it lies, rather than through scratch
    ;; (the outer object of a large value is mostly one member)
    (local.set $r (local.get $base))
    (block $found
      (loop $longest
        (br_if $found (i32.ge_u (local.get $r) (local.get $top)))
        ;; a member runs from its key's opening quote to the comma or brace after its value
        (local.set $len (i32.sub (i32.load offset=8 (local.get $r)) (i32.sub (i32.load (local.get $r)) (i32.const 1))))
        (if (i32.gt_u (local.get $len) (local.get $bigLen))
          (then
            (local.set $big (local.get $r))
            (local.set $bigLen (local.get $len))))
        (local.set $r (i32.add (local.get $r) (i32.const 12)))
        (br $longest)))
    ;; the inside in order, commas included, but for the longest member's bytes; where they go
    (local.set $out (local.get $scratch))
    (local.set $r (local.get $base))
    (block $written
      (loop $members
        (br_if $written (i32.ge_u (local.get $r) (local.get $top)))
        (if (i32.gt_u (local.get $r) (local.get $base))
          (then
            (i32.store8 (local.get $out) (i32.const 0x2c))
            (local.set $out (i32.add (local.get $out) (i32.const 1)))))
        (local.set $start (i32.sub (i32.load (local.get $r)) (i32.const 1)))
        (local.set $len (i32.sub (i32.load offset=8 (local.get $r)) (local.get $start)))
        (if (i32.eq (local.get $r) (local.get $big))
          (then (local.set $split (i32.sub (local.get $out) (local.get $scratch))))
          (else
            (memory.copy (local.get $out) (local.get $start) (local.get $len))
            (local.set $out (i32.add (local.get $out) (local.get $len)))))
        (local.set $r (i32.add (local.get $r) (i32.const 12)))
        (br $members)))
    ;; the longest to its place (memory.copy allows overlap), then what goes before and after it
    (local.set $at (i32.add (i32.add (local.get $open) (i32.const 1)) (local.get $split)))
    (local.set $start (i32.sub (i32.load (local.get $big)) (i32.const 1)))
    (if (i32.ne (local.get $at) (local.get $start))
      (then (memory.copy (local.get $at) (local.get $start) (local.get $bigLen))))
    (memory.copy (i32.add (local.get $open) (i32.const 1)) (local.get $scratch) (local.get $split))
    (memory.copy (i32.add (local.get $at) (local.get $bigLen))
      (i32.add (local.get $scratch) (local.get $split))
      (i32.sub (i32.sub (local.get $out) (local.get $scratch)) (local.get $split))))

  (func (export "reorder")
    (param $n i32) (param $members i32) (param $membersEnd i32) (param $frames i32) (param $framesEnd i32) (param $scratch i32)
    (result i32)
    (local $i i32) (local $bits i32) (local $p i32) (local $c i32) (local $v v128)
    (local $skip i32) (local $inside i32) (local $isKey i32) (local $expectKey i32)
    (local $fp i32) (local $mt i32) (local $base i32)
    ;; no frame open: the top frame is the one before the first
    (local.set $fp (i32.sub (local.get $frames) (i32.const 12)))
    (local.set $mt (local.get $members))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $v (v128.load (local.get $i)))
        ;; a quote, a backslash, { } [ ] or a comma (0x7b and 0x7d differ from 0x5b and 0x5d by 0x20)
        (local.set $bits
          (i8x16.bitmask
            (v128.or
              (v128.or
                (v128.or
                  (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x22)))
                  (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c))))
                (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x2c))))
              (v128.or
                (i8x16.eq
                  (v128.and (local.get $v) (i8x16.splat (i32.const 0xdf)))
                  (i8x16.splat (i32.const 0x5b)))
                (i8x16.eq
                  (v128.and (local.get $v) (i8x16.splat (i32.const 0xdf)))
                  (i8x16.splat (i32.const 0x5d)))))))
        ;; the last block: only the bytes before n
        (if (i32.lt_u (i32.sub (local.get $n) (local.get $i)) (i32.const 16))
          (then
            (local.set $bits
              (i32.and (local.get $bits)
                (i32.sub (i32.shl (i32.const 1) (i32.sub (local.get $n) (local.get $i))) (i32.const 1))))))
        (block $bitsdone
          (loop $each
            (br_if $bitsdone (i32.eqz (local.get $bits)))
            (local.set $p (i32.add (local.get $i) (i32.ctz (local.get $bits))))
            (local.set $bits (i32.and (local.get $bits) (i32.sub (local.get $bits) (i32.const 1))))
            ;; a byte an escape already took
            (br_if $each (i32.lt_u (local.get $p) (local.get $skip)))
            (local.set $c (i32.load8_u (local.get $p)))
            (if (local.get $inside)
              (then
                (if (i32.eq (local.get $c) (i32.const 0x22))
                  (then
                    (local.set $inside (i32.const 0))
                    (if (local.get $isKey)
                      (then
                        (local.set $isKey (i32.const 0))
                        (i32.store offset=4 (i32.sub (local.get $mt) (i32.const 12)) (local.get $p))
                        ;; after an earlier key of the same object that sorts after it: out of order
                        (if (i32.ge_u (i32.sub (local.get $mt) (i32.const 24)) (i32.load offset=4 (local.get $fp)))
                          (then
                            (if (call $less (i32.sub (local.get $mt) (i32.const 12)) (i32.sub (local.get $mt) (i32.const 24)))
                              (then
                                (i32.store offset=8 (local.get $fp)
                                  (i32.or (i32.load offset=8 (local.get $fp)) (i32.const 2))))))))))
                  (else
                    (if (i32.eq (local.get $c) (i32.const 0x5c))
                      (then
                        (if (local.get $isKey) (then (return (i32.const -1))))
                        (local.set $skip (i32.add (local.get $p) (i32.const 2)))))))
                (br $each)))
            ;; outside strings
            (if (i32.eq (local.get $c) (i32.const 0x22))
              (then
                (local.set $inside (i32.const 1))
                (if (local.get $expectKey)
                  (then
                    (local.set $expectKey (i32.const 0))
                    (local.set $isKey (i32.const 1))
                    (if (i32.gt_u (i32.add (local.get $mt) (i32.const 12)) (local.get $membersEnd))
                      (then (return (i32.const -2))))
                    (i32.store (local.get $mt) (i32.add (local.get $p) (i32.const 1)))
                    (local.set $mt (i32.add (local.get $mt) (i32.const 12)))))
                (br $each)))
            (if (i32.eq (local.get $c) (i32.const 0x2c))
              (then
                (if (i32.and (i32.load offset=8 (local.get $fp)) (i32.const 1))
                  (then
                    (i32.store offset=8 (i32.sub (local.get $mt) (i32.const 12)) (local.get $p))
                    (local.set $expectKey (i32.const 1))))
                (br $each)))
            (if (i32.or (i32.eq (local.get $c) (i32.const 0x7b)) (i32.eq (local.get $c) (i32.const 0x5b)))
              (then
                (local.set $fp (i32.add (local.get $fp) (i32.const 12)))
                (if (i32.gt_u (i32.add (local.get $fp) (i32.const 12)) (local.get $framesEnd))
                  (then (return (i32.const -2))))
                (i32.store (local.get $fp) (local.get $p))
                (i32.store offset=4 (local.get $fp) (local.get $mt))
                (local.set $expectKey (i32.eq (local.get $c) (i32.const 0x7b)))
                (i32.store offset=8 (local.get $fp) (local.get $expectKey))
                (br $each)))
            (if (i32.eq (local.get $c) (i32.const 0x5c)) (then (return (i32.const -3))))
            ;; a closing bracket
            (if (i32.lt_u (local.get $fp) (local.get $frames)) (then (return (i32.const -3))))
            (if (i32.eq (local.get $c) (i32.const 0x7d))
              (then
                (local.set $base (i32.load offset=4 (local.get $fp)))
                (if (i32.gt_u (local.get $mt) (local.get $base))
                  (then (i32.store offset=8 (i32.sub (local.get $mt) (i32.const 12)) (local.get $p))))
                (if (i32.and (i32.load offset=8 (local.get $fp)) (i32.const 2))
                  (then
                    (call $sortMembers (i32.load (local.get $fp)) (local.get $base) (local.get $mt)
                      (local.get $framesEnd) (local.get $scratch))))
                (local.set $mt (local.get $base))))
            (local.set $fp (i32.sub (local.get $fp) (i32.const 12)))
            (local.set $expectKey (i32.const 0))
            (br $each)))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $blocks)))
    (if (i32.or (local.get $inside) (i32.ne (local.get $fp) (i32.sub (local.get $frames) (i32.const 12))))
      (then (return (i32.const -3))))
    (i32.const 0))
)
