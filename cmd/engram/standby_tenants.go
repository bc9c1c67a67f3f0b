package main

import (
	"context"

	"github.com/engramhq/engram"
)

// Tenants implements engram.TenantLister; EUNAVAILABLE while the database
// is away.
func (s *standby) Tenants(ctx context.Context, within engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	if _, err := s.service(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	eng := s.eng
	s.mu.RUnlock()
	return eng.Tenants(ctx, within, limit)
}
