" .blk files are blk kernels (editors/vim/syntax/blk.vim).
autocmd BufRead,BufNewFile *.blk setfiletype blk
