// suggest_kinds.c's C++ CU: functions with code are suggested by their
// symbols' (mangled) names, not by the names of their debug info
namespace shapes {
int area(int side)
{
	return side * side;
}
} // namespace shapes

extern "C" int cxx_entry(int x)
{
	return shapes::area(x);
}
