#include "textflag.h"

// func minMaxAVX2(x *float32, n int) (lo, hi float32)
//
// The least and the greatest of x[0:n], n a positive multiple of 8.
TEXT ·minMaxAVX2(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	VMOVUPS Y0, Y1
	ADDQ    $32, SI
	SUBQ    $8, CX
	JEQ     mmreduce

mmloop:
	VMOVUPS (SI), Y2
	VMINPS  Y2, Y0, Y0
	VMAXPS  Y2, Y1, Y1
	ADDQ    $32, SI
	SUBQ    $8, CX
	JNE     mmloop

mmreduce:
	VEXTRACTF128 $1, Y0, X2
	VMINPS       X2, X0, X0
	VEXTRACTF128 $1, Y1, X3
	VMAXPS       X3, X1, X1
	VPERMILPS    $0x4e, X0, X2
	VMINPS       X2, X0, X0
	VPERMILPS    $0x4e, X1, X3
	VMAXPS       X3, X1, X1
	VPERMILPS    $0xb1, X0, X2
	VMINPS       X2, X0, X0
	VPERMILPS    $0xb1, X1, X3
	VMAXPS       X3, X1, X1
	VMOVSS       X0, lo+16(FP)
	VMOVSS       X1, hi+20(FP)
	VZEROUPPER
	RET

// permPack undoes the lane interleaving of VPACKSSDW and VPACKUSWB.
DATA permPack<>+0(SB)/4, $0
DATA permPack<>+4(SB)/4, $4
DATA permPack<>+8(SB)/4, $1
DATA permPack<>+12(SB)/4, $5
DATA permPack<>+16(SB)/4, $2
DATA permPack<>+20(SB)/4, $6
DATA permPack<>+24(SB)/4, $3
DATA permPack<>+28(SB)/4, $7
GLOBL permPack<>(SB), RODATA|NOPTR, $32

// func quantizeRowAVX2(dst *uint8, x *float32, n int, inv float32, z int32)
//
// dst[c] = clamp(round(x[c]*inv) + z, 0, 255) for c < n, n a positive
// multiple of 32; VCVTPS2DQ rounds half to even, and the saturating packs
// clamp.
TEXT ·quantizeRowAVX2(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS inv+24(FP), Y8
	MOVL         z+28(FP), AX
	VMOVD        AX, X9
	VPBROADCASTD X9, Y9
	VMOVDQU      permPack<>(SB), Y10

qloop:
	VMULPS     (SI), Y8, Y0
	VMULPS     32(SI), Y8, Y1
	VMULPS     64(SI), Y8, Y2
	VMULPS     96(SI), Y8, Y3
	VCVTPS2DQ  Y0, Y0
	VCVTPS2DQ  Y1, Y1
	VCVTPS2DQ  Y2, Y2
	VCVTPS2DQ  Y3, Y3
	VPADDD     Y9, Y0, Y0
	VPADDD     Y9, Y1, Y1
	VPADDD     Y9, Y2, Y2
	VPADDD     Y9, Y3, Y3
	VPACKSSDW  Y1, Y0, Y0
	VPACKSSDW  Y3, Y2, Y2
	VPACKUSWB  Y2, Y0, Y0
	VPERMD     Y0, Y10, Y0
	VMOVDQU    Y0, (DI)
	ADDQ       $128, SI
	ADDQ       $32, DI
	SUBQ       $32, CX
	JNE        qloop
	VZEROUPPER
	RET

// func dequantRowAVX2(c *float32, acc, colSum *int32, colScale *float32, n int, sa float32, z int32, relu bool)
//
// c[j] += (sa*colScale[j]) * float32(acc[j] - z*colSum[j]) for j < n, n a
// positive multiple of 8, rounding after each operation as the Go loop
// does; with relu, c[j] = VMAXPS(c[j], 0) after.
TEXT ·dequantRowAVX2(SB), NOSPLIT, $0-49
	MOVQ         c+0(FP), DI
	MOVQ         acc+8(FP), SI
	MOVQ         colSum+16(FP), BX
	MOVQ         colScale+24(FP), DX
	MOVQ         n+32(FP), CX
	VBROADCASTSS sa+40(FP), Y8
	MOVL         z+44(FP), AX
	VMOVD        AX, X9
	VPBROADCASTD X9, Y9
	VXORPS       Y7, Y7, Y7
	MOVBLZX      relu+48(FP), AX
	TESTL        AX, AX
	JNE          dqreluloop

dqloop:
	VPMULLD   (BX), Y9, Y0
	VMOVDQU   (SI), Y1
	VPSUBD    Y0, Y1, Y1
	VCVTDQ2PS Y1, Y1
	VMULPS    (DX), Y8, Y2
	VMULPS    Y1, Y2, Y2
	VADDPS    (DI), Y2, Y2
	VMOVUPS   Y2, (DI)
	ADDQ      $32, SI
	ADDQ      $32, BX
	ADDQ      $32, DX
	ADDQ      $32, DI
	SUBQ      $8, CX
	JNE       dqloop
	VZEROUPPER
	RET

dqreluloop:
	VPMULLD   (BX), Y9, Y0
	VMOVDQU   (SI), Y1
	VPSUBD    Y0, Y1, Y1
	VCVTDQ2PS Y1, Y1
	VMULPS    (DX), Y8, Y2
	VMULPS    Y1, Y2, Y2
	VADDPS    (DI), Y2, Y2
	VMAXPS    Y7, Y2, Y2
	VMOVUPS   Y2, (DI)
	ADDQ      $32, SI
	ADDQ      $32, BX
	ADDQ      $32, DX
	ADDQ      $32, DI
	SUBQ      $8, CX
	JNE       dqreluloop
	VZEROUPPER
	RET
