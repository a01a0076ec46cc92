module github.com/zkraft/zkraft

go 1.26.8
