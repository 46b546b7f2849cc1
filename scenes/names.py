"""Every MJCF name used by Traction scenes. Task and coupling code use these, never literals."""

CHASSIS_BODY = "chassis"
CHASSIS_JOINT = "chassis_free"
CHASSIS_CABIN = "chassis_cabin"
CHASSIS_VISUAL = "chassis_body"
#: the yellow band across the front of the body's top (the front seen from above)
CHASSIS_FRONT = "chassis_front"
GROUND = "ground"
TERRAIN_HFIELD = "terrain"
TERRAIN_TEXTURE = "terrain_surfaces"
GOAL_MARKER = "goal"
CAMERA_DRIVER = "driver"
CAMERA_CHASE = "chase"
CAMERA_TOP = "top"
CAMERA_OVERHEAD = "overhead"
#: every vehicle's cameras (behind it, high above it, in the cabin, above it turning with it)
CAMERAS = (CAMERA_CHASE, CAMERA_TOP, CAMERA_DRIVER, CAMERA_OVERHEAD)

#: Rangefinder data fields requested per wheel, in MuJoCo's order: dist, point(3), normal(3).
RAY_DATA = ("dist", "point", "normal")
RAY_DATA_SIZE = 7


def chassis_collision(i: int) -> str:
    """Collision geom ``i`` of the chassis (slab ``i`` of its solid, rear to front)."""
    return f"chassis_collision{i}"


def chassis_hull_mesh(i: int) -> str:
    """Mesh of hull slab ``i``."""
    return f"chassis_hull{i}"


def wheel_ray_site(i: int, j: int | None = None) -> str:
    """Site at the top of wheel ``i`` at max compression, z axis along suspension travel (with
    ``j``: footprint ray ``j`` of the wheel, see ``vehicle_model.footprint``)."""
    return f"wheel{i}_ray" if j is None else f"wheel{i}_ray{j}"


def wheel_ray_sensor(i: int, j: int | None = None) -> str:
    """Rangefinder of wheel ``i`` (``dist point normal``; with ``j``: of its footprint ray
    ``j``, the wheel's rays consecutive in ``sensordata``)."""
    return f"wheel{i}_ground" if j is None else f"wheel{i}_ground{j}"


def wheel_visual(i: int) -> str:
    """Visual-only tyre geom of wheel ``i`` (on the chassis body, so its own rays ignore it)."""
    return f"wheel{i}_tyre"


def ground_patch(i: int) -> str:
    """Surface patch ``i`` lying on the ground."""
    return f"{GROUND}_patch{i}"


def marker(i: int) -> str:
    """Marker site ``i`` of a terrain (circle posts, heading posts)."""
    return f"marker{i}"


def headlight(i: int) -> str:
    """Headlight ``i`` (0 right, 1 left) on the body's front face."""
    return f"chassis_headlight{i}"


def taillight(i: int) -> str:
    """Tail light ``i`` (0 right, 1 left) on the body's back face."""
    return f"chassis_taillight{i}"


def obstacle(i: int) -> str:
    """Box ``i`` of the ``obstacle`` terrain (a step, a wall, or the slabs either side of a
    ditch)."""
    return f"obstacle{i}"
