package script

import lua "github.com/yuin/gopher-lua"

func (st *state) cjsonLib() *lua.LTable    { return st.L.NewTable() }
func (st *state) structLib() *lua.LTable   { return st.L.NewTable() }
func (st *state) cmsgpackLib() *lua.LTable { return st.L.NewTable() }
