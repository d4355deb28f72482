"""stdlib vector_add on torch tensors through the blk Python binding.

    blkc stdlib/elementwise.blk --kernel vector_add -o vector_add.ptx
    PYTHONPATH=runtime/python python3 examples/python_vector_add.py vector_add.ptx
"""
import sys
import torch
import blk

dev = blk.Device(0)                                     # the GPU torch uses (primary context)
kernel = dev.load_ptx_file(sys.argv[1] if len(sys.argv) > 1 else "vector_add.ptx").kernel("vector_add")
print(kernel, kernel.consts)                            # params and const values from blk-meta

n = 1 << 20
x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
out = torch.empty_like(x)
kernel[blk.cdiv(n, kernel.consts["BLOCK"])](x, y, out, n)   # tensors pass data_ptr(); default stream
torch.cuda.synchronize()
print("max error:", (out - (x + y)).abs().max().item())
