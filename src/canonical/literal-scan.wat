;; The byte scanner behind rawLiteralsOf (raw-strings.ts): finds every string
;; literal of a JSON document, sixteen bytes at a time, and checks that each
;; is in JSON.stringify's spelling. Compiled at build time by
;; scripts/build-wasm.js (wabt) into dist/canonical/literal-scan.generated.js.
;;
;; scan(n, out, max): the document is bytes [0, n) of memory; bytes [n, n+16)
;; must be readable (their values do not matter). Writes the [start, end)
;; of each literal (quotes included) as two u32 at out, out+8, ... and returns
;; how many it found, or
;;   -1  not JSON.stringify's spelling (an escape it does not write, a control
;;       character inside a literal, a control character other than a line
;;       feed between tokens, a backslash outside a literal, an unclosed
;;       literal): the caller takes the general path, which names any problem;
;;   -2  more than max literals.
;; Bytes from 0x80 up are taken as they are: the caller has checked UTF-8.
(module
  (memory (export "memory") 1)
  (func (export "scan") (param $n i32) (param $out i32) (param $max i32) (result i32)
    (local $i i32) (local $bits i32) (local $p i32) (local $c i32) (local $e i32)
    (local $skip i32) (local $inside i32) (local $start i32) (local $count i32)
    (local $v v128) (local $h i32) (local $l i32)
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $v (v128.load (local.get $i)))
        ;; quote, backslash, or below 0x20
        (local.set $bits
          (i8x16.bitmask
            (v128.or
              (v128.or
                (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x22)))
                (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c))))
              (i8x16.lt_u (local.get $v) (i8x16.splat (i32.const 0x20))))))
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
            (if (i32.eq (local.get $c) (i32.const 0x22))
              (then
                (if (local.get $inside)
                  (then
                    (if (i32.ge_u (local.get $count) (local.get $max)) (then (return (i32.const -2))))
                    (i32.store (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 3))) (local.get $start))
                    (i32.store (i32.add (local.get $out) (i32.add (i32.shl (local.get $count) (i32.const 3)) (i32.const 4)))
                      (i32.add (local.get $p) (i32.const 1)))
                    (local.set $count (i32.add (local.get $count) (i32.const 1)))
                    (local.set $inside (i32.const 0)))
                  (else
                    (local.set $start (local.get $p))
                    (local.set $inside (i32.const 1))))
                (br $each)))
            (if (i32.eq (local.get $c) (i32.const 0x5c))
              (then
                (if (i32.eqz (local.get $inside)) (then (return (i32.const -1))))
                (if (i32.ge_u (i32.add (local.get $p) (i32.const 1)) (local.get $n)) (then (return (i32.const -1))))
                (local.set $e (i32.load8_u (i32.add (local.get $p) (i32.const 1))))
                ;; the short escapes: \" \\ \b \f \n \r \t
                (if (i32.or
                      (i32.or
                        (i32.or (i32.eq (local.get $e) (i32.const 0x22)) (i32.eq (local.get $e) (i32.const 0x5c)))
                        (i32.or (i32.eq (local.get $e) (i32.const 0x62)) (i32.eq (local.get $e) (i32.const 0x66))))
                      (i32.or
                        (i32.or (i32.eq (local.get $e) (i32.const 0x6e)) (i32.eq (local.get $e) (i32.const 0x72)))
                        (i32.eq (local.get $e) (i32.const 0x74))))
                  (then
                    (local.set $skip (i32.add (local.get $p) (i32.const 2)))
                    (br $each)))
                ;; \u00xx, lowercase, for a control character without a short escape
                (if (i32.ne (local.get $e) (i32.const 0x75)) (then (return (i32.const -1))))
                (if (i32.gt_u (i32.add (local.get $p) (i32.const 6)) (local.get $n)) (then (return (i32.const -1))))
                (if (i32.ne (i32.load16_u (i32.add (local.get $p) (i32.const 2))) (i32.const 0x3030)) (then (return (i32.const -1))))
                (local.set $h (i32.load8_u (i32.add (local.get $p) (i32.const 4))))
                (local.set $l (i32.load8_u (i32.add (local.get $p) (i32.const 5))))
                (if (i32.eq (local.get $h) (i32.const 0x30))
                  (then
                    ;; 00-07, 0b, 0e, 0f (08 09 0a 0c 0d have short escapes)
                    (if (i32.eqz
                          (i32.or
                            (i32.and (i32.ge_u (local.get $l) (i32.const 0x30)) (i32.le_u (local.get $l) (i32.const 0x37)))
                            (i32.or (i32.eq (local.get $l) (i32.const 0x62))
                              (i32.or (i32.eq (local.get $l) (i32.const 0x65)) (i32.eq (local.get $l) (i32.const 0x66))))))
                      (then (return (i32.const -1)))))
                  (else
                    ;; 10-1f
                    (if (i32.ne (local.get $h) (i32.const 0x31)) (then (return (i32.const -1))))
                    (if (i32.eqz
                          (i32.or
                            (i32.and (i32.ge_u (local.get $l) (i32.const 0x30)) (i32.le_u (local.get $l) (i32.const 0x39)))
                            (i32.and (i32.ge_u (local.get $l) (i32.const 0x61)) (i32.le_u (local.get $l) (i32.const 0x66)))))
                      (then (return (i32.const -1))))))
                (local.set $skip (i32.add (local.get $p) (i32.const 6)))
                (br $each)))
            ;; a control character: only a line feed, and only between tokens
            (if (i32.or (local.get $inside) (i32.ne (local.get $c) (i32.const 0x0a))) (then (return (i32.const -1))))
            (br $each)))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $blocks)))
    (if (local.get $inside) (then (return (i32.const -1))))
    (local.get $count)))
