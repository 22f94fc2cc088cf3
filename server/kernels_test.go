package server_test

import (
	"context"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server"
)

// setStart sets how c's runner starts kernels (nil: it starts none), keeping how it lists them.
func setStart(c *server.Config, start func(ctx context.Context, name, workspace string) (kernel.Kernel, error)) {
	k, _ := c.Kernels.(runner.KernelFuncs)
	k.StartFunc = start
	c.Kernels = k
}

// setList sets how c's runner lists its kernels, keeping how it starts them.
func setList(c *server.Config, list func(context.Context) []server.KernelInfo) {
	k, _ := c.Kernels.(runner.KernelFuncs)
	k.ListFunc = list
	c.Kernels = k
}
