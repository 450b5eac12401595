#include "textflag.h"

// func dotsAVX2(q *int16, data *byte, stride, body, n int, out *int32)
//
// For each vector: its bytes, 16 at a time, sign-extended to int16
// (VPMOVSXBW), multiplied by the query's and summed in pairs to int32
// (VPMADDWD: at most 2×127×127, no overflow), in two accumulators; then
// the eight lanes summed.
TEXT ·dotsAVX2(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), AX
	MOVQ data+8(FP), SI
	MOVQ stride+16(FP), BX
	MOVQ body+24(FP), CX
	MOVQ n+32(FP), DX
	MOVQ out+40(FP), DI
	TESTQ DX, DX
	JZ done

vector:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ R8, R8
	MOVQ AX, R9
	MOVQ CX, R10
	CMPQ R10, $32
	JLT block16

block32:
	VPMOVSXBW (SI)(R8*1), Y2
	VPMOVSXBW 16(SI)(R8*1), Y3
	VPMADDWD (R9), Y2, Y2
	VPMADDWD 32(R9), Y3, Y3
	VPADDD Y2, Y0, Y0
	VPADDD Y3, Y1, Y1
	ADDQ $32, R8
	ADDQ $64, R9
	SUBQ $32, R10
	CMPQ R10, $32
	JGE block32

block16:
	CMPQ R10, $16
	JLT sum
	VPMOVSXBW (SI)(R8*1), Y2
	VPMADDWD (R9), Y2, Y2
	VPADDD Y2, Y0, Y0

sum:
	VPADDD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, (DI)
	ADDQ $4, DI
	ADDQ BX, SI
	DECQ DX
	JNZ vector

done:
	VZEROUPPER
	RET
