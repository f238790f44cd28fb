/* Input handling: mouse orbit/zoom/pan applied to the camera, keys mapped to actions that the
 * main loop carries out, and the help text that lists them. */
#include "demo_input.h"

const char *const pbfcl_demo_help_lines[] = {
    "left drag            orbit",
    "wheel                zoom",
    "middle / shift+left  pan",
    "right drag           push the fluid",
    "ctrl+left drag       move a collision shape",
    "space                pause / resume",
    "N                    single step while paused",
    "R                    reset the scene",
    "1 2 3 4 5 6 7 8 9 0  the first ten built-in scenes, in --scene's order",
    "Tab / shift+Tab      the next / previous built-in scene, all of them",
    "+ -                  particles x1.5 / /1.5",
    "T                    tilt the box",
    "arrows               turn gravity 10 degrees (up/down about x, left/right about z)",
    "S                    shake the box",
    "F                    fluid surface / spheres",
    "G                    fluid smoothing: bilateral / curvature flow",
    "D                    spray, foam and bubbles on / off",
    "[ ]                  fewer / more smoothing iterations",
    "C                    colour spheres by speed / density",
    "I / shift+I          more / fewer solver iterations",
    "V / shift+V          viscosity x2 / /2",
    "O / shift+O          vorticity confinement x2 / /2",
    "W / shift+W          wind on cloth x2 / /2 (from none: 1 m/s along x)",
    "E / shift+E          turn the wind 45 degrees left / right",
    "P                    screenshot (pbfcl-shot-NNNN.png here)",
    "H                    this help",
    "Esc                  quit",
    NULL,
};

void pbfcl_demo_input_begin_frame(pbfcl_demo_input *in)
{
    in->pause = in->step = in->reset = in->help = in->color = in->tilt = in->shake = false;
    in->render = in->smooth_method = in->shot = in->diffuse = false;
    in->smooth_change = 0;
    in->scene = in->scene_cycle = 0;
    in->count_change = 0;
    in->tune_notch = 0;
    in->turn_pitch = in->turn_roll = 0.0f;
    in->push_dx = in->push_dy = 0.0f;
    in->grab_dx = in->grab_dy = 0.0f;
}

/* A key that changes a solver parameter: up one notch, or down with shift held when the key
 * went down (the event's own modifiers: SDL_GetModState() is the state after the whole queue
 * of the frame, so a quick shift+I read as I). */
static void on_tune_key(pbfcl_demo_input *in, pbfcl_demo_tune which, Uint16 mod)
{
    in->tune = which;
    in->tune_notch = (mod & KMOD_SHIFT) ? -1 : 1;
}

static void on_key(pbfcl_demo_input *in, SDL_Keycode key, Uint16 mod)
{
    switch (key) {
    case SDLK_i:
        on_tune_key(in, PBFCL_DEMO_TUNE_ITERATIONS, mod);
        break;
    case SDLK_v:
        on_tune_key(in, PBFCL_DEMO_TUNE_VISCOSITY, mod);
        break;
    case SDLK_o:
        on_tune_key(in, PBFCL_DEMO_TUNE_VORTICITY, mod);
        break;
    case SDLK_w:
        on_tune_key(in, PBFCL_DEMO_TUNE_WIND, mod);
        break;
    case SDLK_e:
        on_tune_key(in, PBFCL_DEMO_TUNE_WIND_TURN, mod);
        break;
    case SDLK_UP:
    case SDLK_DOWN:
        in->turn_pitch += key == SDLK_UP ? -10.0f : 10.0f;
        break;
    case SDLK_LEFT:
    case SDLK_RIGHT:
        in->turn_roll += key == SDLK_LEFT ? 10.0f : -10.0f;
        break;
    case SDLK_ESCAPE:
        in->quit = true;
        break;
    case SDLK_SPACE:
        in->pause = true;
        break;
    case SDLK_n:
        in->step = true;
        break;
    case SDLK_r:
        in->reset = true;
        break;
    case SDLK_h:
        in->help = true;
        break;
    case SDLK_c:
        in->color = true;
        break;
    case SDLK_f:
        in->render = true;
        break;
    case SDLK_g:
        in->smooth_method = true;
        break;
    case SDLK_d:
        in->diffuse = true;
        break;
    case SDLK_LEFTBRACKET:
        in->smooth_change = -1;
        break;
    case SDLK_RIGHTBRACKET:
        in->smooth_change = 1;
        break;
    case SDLK_p:
        in->shot = true;
        break;
    case SDLK_t:
        in->tilt = true;
        break;
    case SDLK_s:
        in->shake = true;
        break;
    case SDLK_1:
    case SDLK_2:
    case SDLK_3:
    case SDLK_4:
    case SDLK_5:
    case SDLK_6:
    case SDLK_7:
    case SDLK_8:
    case SDLK_9:
        in->scene = 1 + (int)(key - SDLK_1);
        break;
    case SDLK_0:
        in->scene = 10;
        break;
    case SDLK_KP_1:
    case SDLK_KP_2:
    case SDLK_KP_3:
    case SDLK_KP_4:
    case SDLK_KP_5:
    case SDLK_KP_6:
    case SDLK_KP_7:
    case SDLK_KP_8:
    case SDLK_KP_9:
        in->scene = 1 + (int)(key - SDLK_KP_1);
        break;
    case SDLK_KP_0:
        in->scene = 10;
        break;
    case SDLK_TAB:
        in->scene_cycle = (mod & KMOD_SHIFT) ? -1 : 1;
        break;
    case SDLK_PLUS:
    case SDLK_EQUALS:
    case SDLK_KP_PLUS:
        in->count_change = 1;
        break;
    case SDLK_MINUS:
    case SDLK_KP_MINUS:
        in->count_change = -1;
        break;
    default:
        break;
    }
}

static void on_button(pbfcl_demo_input *in, const SDL_MouseButtonEvent *b, bool down)
{
    if (b->button == SDL_BUTTON_LEFT) {
        in->left = down;
        in->grab = down && (SDL_GetModState() & KMOD_CTRL) != 0; /* until the button is up */
    } else if (b->button == SDL_BUTTON_MIDDLE)
        in->middle = down;
    else if (b->button == SDL_BUTTON_RIGHT)
        in->right = down;
    in->mouse_x = b->x;
    in->mouse_y = b->y;
}

static void on_motion(pbfcl_demo_input *in, const SDL_MouseMotionEvent *m, pbfcl_demo_camera *cam,
                      const pbfcl_demo_window *w)
{
    in->mouse_x = m->x;
    in->mouse_y = m->y;
    bool shift = (SDL_GetModState() & KMOD_SHIFT) != 0;
    if (in->grab) {
        in->grab_dx += (float)m->xrel;
        in->grab_dy += (float)m->yrel;
    } else if ((in->left && shift) || in->middle)
        pbfcl_demo_camera_pan(cam, (float)m->xrel, (float)m->yrel, w->width, w->height);
    else if (in->left)
        pbfcl_demo_camera_orbit(cam, (float)m->xrel, (float)m->yrel);
    if (in->right) {
        in->push_dx += (float)m->xrel;
        in->push_dy += (float)m->yrel;
    }
}

void pbfcl_demo_input_poll(pbfcl_demo_input *in, pbfcl_demo_camera *cam, pbfcl_demo_window *w)
{
    SDL_Event e;
    while (SDL_PollEvent(&e)) {
        switch (e.type) {
        case SDL_QUIT:
            in->quit = true;
            break;
        case SDL_KEYDOWN:
            on_key(in, e.key.keysym.sym, e.key.keysym.mod);
            break;
        case SDL_MOUSEBUTTONDOWN:
            on_button(in, &e.button, true);
            break;
        case SDL_MOUSEBUTTONUP:
            on_button(in, &e.button, false);
            break;
        case SDL_MOUSEMOTION:
            on_motion(in, &e.motion, cam, w);
            break;
        case SDL_MOUSEWHEEL:
#if SDL_VERSION_ATLEAST(2, 0, 18)
            pbfcl_demo_camera_zoom(cam,
                                   e.wheel.preciseY != 0.0f ? e.wheel.preciseY : (float)e.wheel.y);
#else
            pbfcl_demo_camera_zoom(cam, (float)e.wheel.y);
#endif
            break;
        case SDL_WINDOWEVENT:
            pbfcl_demo_window_update_size(w);
            break;
        default:
            break;
        }
    }
}
