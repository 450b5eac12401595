#include "textflag.h"

// func dotsNEON(q, data *byte, stride, body, n int, out *int32)
//
// For each vector: 16 bytes at a time of it and of the query, multiplied
// into int16 (SMULL, SMULL2: at most 127×127, no overflow) and added in
// pairs into two int32 accumulators (SADALP); then their lanes summed.
// Go's assembler names none of these three, so they are written as
// their encodings.
TEXT ·dotsNEON(SB), NOSPLIT, $0-48
	MOVD q+0(FP), R0
	MOVD data+8(FP), R1
	MOVD stride+16(FP), R2
	MOVD body+24(FP), R3
	MOVD n+32(FP), R4
	MOVD out+40(FP), R5
	CBZ  R4, done

vector:
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	MOVD R0, R6
	MOVD R1, R7
	MOVD R3, R8

block16:
	VLD1.P 16(R6), [V0.B16]
	VLD1.P 16(R7), [V1.B16]
	WORD $0x0E21C002 // SMULL  V2.8H, V0.8B, V1.8B
	WORD $0x4E21C003 // SMULL2 V3.8H, V0.16B, V1.16B
	WORD $0x4E606844 // SADALP V4.4S, V2.8H
	WORD $0x4E606865 // SADALP V5.4S, V3.8H
	SUBS $16, R8, R8
	BNE  block16

	VADD  V5.S4, V4.S4, V4.S4
	VADDV V4.S4, V4
	VMOV  V4.S[0], R9
	MOVW  R9, (R5)
	ADD   $4, R5, R5
	ADD   R2, R1, R1
	SUBS  $1, R4, R4
	BNE   vector

done:
	RET
