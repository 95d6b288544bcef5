module hoarebench

go 1.22
